#!/usr/bin/env bash
# Benchmark (not a test): the kernel's TCP counters (nstat) per block over 2 s in the
# middle of a 6 s `rr --proto tcp` at N clients (2 threads per end) and of
# bench/tcp_rr_ref.c in the same layout: segments, pure and delayed ACKs.
#
#   cc -O2 -o /tmp/tcp_rr_ref bench/tcp_rr_ref.c -lpthread
#   BIN=target/release/mtuperf N=4096 bench/rr_tcp_nstat.sh
set -euo pipefail
BIN=${BIN:-target/release/mtuperf}; REF=${REF:-/tmp/tcp_rr_ref}
N=${N:-4096}
ulimit -n $(ulimit -Hn)
"$BIN" serve --bind 127.0.0.1 --port 17893 2>/dev/null & a=$!
trap 'kill "$a" 2>/dev/null || true' EXIT
sleep 1
"$BIN" --no-store rr 127.0.0.1:17893 --proto tcp --threads 2 --workers 2 --clients $N --time 6s --json > /tmp/tcpmt.json 2>/dev/null & c=$!
sleep 3; nstat -n; sleep 2; nstat > /tmp/ns-mt.txt; wait $c
kill $a
"$REF" "$N" 6 2 > /tmp/tcpref.txt & r=$!
sleep 3; nstat -n; sleep 2; nstat > /tmp/ns-ref.txt; wait $r
m=$(python3 -c "import json; print(json.load(open('/tmp/tcpmt.json'))['steps'][0]['metrics']['blocks_per_s'])"); rr=$(awk '{print $2}' /tmp/tcpref.txt)
echo "mt $m ref $rr"
python3 - $m $rr <<'PY'
import sys
m,r=float(sys.argv[1]),float(sys.argv[2])
def load(f):
    d={}
    for l in open(f):
        p=l.split()
        if len(p)>=2 and p[1].isdigit(): d[p[0]]=int(p[1])
    return d
a,b=load('/tmp/ns-mt.txt'),load('/tmp/ns-ref.txt')
for k in sorted(set(a)|set(b)):
    x,y=a.get(k,0)/(m*2),b.get(k,0)/(r*2)
    if max(x,y)>0.005: print(f"{k:32s} mt {x:6.3f}  ref {y:6.3f}")
PY
