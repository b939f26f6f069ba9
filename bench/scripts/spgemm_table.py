#!/usr/bin/env python3
"""The SpGEMM suite table of docs/performance.md from a sparsetc_bench --suite spgemm CSV.

Usage: spgemm_table.py CSV [TYPE]. For every square matrix: nnz(A), the best cuSPARSE algorithm of
value type TYPE (f32 when not given, or f64) and its time, ours (sparsetc/TYPE/api), the speedup, and peak memory ours / cuSPARSE ALG3 (MB); then the
geometric mean and the matrices below 1x. Standard library only (runs on the device too).
"""
import csv,sys,math,collections
value_type=sys.argv[2] if len(sys.argv)>2 else 'f32'
rows=[r for r in csv.DictReader(open(sys.argv[1])) if r['op']=='spgemm' and r['status']=='ok']
best=collections.defaultdict(lambda:(1e30,'')); ours={}; alg3={}
for r in rows:
    if r['rows']!=r['cols']: continue
    t=float(r['median_ms'])
    if r['provider']=='cusparse' and r['value_type']==value_type:
        if t<best[r['matrix']][0]: best[r['matrix']]=(t,r['alg'])
        if 'ALG3' in r['alg']: alg3[r['matrix']]=float(r['mem_bytes'] or 0)
    if r['variant']==f'sparsetc/{value_type}/api': ours[r['matrix']]=(t,float(r['mem_bytes'] or 0),r['nnz'])
s=[];low=[]
for m in sorted(ours):
    if m in best and best[m][0]<1e29:
        x=best[m][0]/ours[m][0]; s.append(x)
        print(f"| {m} | {int(ours[m][2]):,} | {best[m][0]:.3f} ({best[m][1].replace('CUSPARSE_SPGEMM_','').lower()}) | {ours[m][0]:.3f} | {x:.2f}x | {ours[m][1]/1e6:.0f} / {alg3.get(m,0)/1e6:.0f} |")
        if x<1: low.append(f"{m} {x:.2f}")
print(f"geomean {math.exp(sum(map(math.log,s))/len(s)):.3f} over {len(s)}; below 1: {low}")
