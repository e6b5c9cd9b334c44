"""The bench's outputs: results.json, results.md (the tables of docs/benchmarks.md), PNG
plots drawn by gnuplot (skipped, with the reason, where gnuplot is absent) and the ratios
printed at the end of a run."""
import json
import shutil
import subprocess


def fmt(x, digits=1):
    return '—' if x is None else f'{x:,.{digits}f}'


def ratios(r):
    """The key ratios, each computed from two figures measured in this run."""
    out = {}
    hits = r.get('hits')
    if hits:
        by_n = {row['clients']: row for row in hits['clients']}
        for n, row in by_n.items():
            out[f'hit p50 / floor p50, {n} clients'] = row['p50_ratio']
            out[f'hit p99 / floor p99, {n} clients'] = row['p99_ratio']
        one = by_n[min(by_n)]['kcache']['p50_us']
        out['stat()+open() p50 / kcache hit p50'] = hits['statopen']['p50_us'] / one
        for peer, p in hits['peers'].items():
            if 'hit_ms' in p:
                out[f'{peer} hit / kcache hit p50'] = p['hit_ms'] * 1e3 / one
    dedup = r.get('dedup')
    if dedup:
        last = dedup['kcache'][-1]
        out[f'kcache compiles for N={last["clients"]}'] = last['compiles']
        out[f'kcache wall N={last["clients"]} / N=1'] = last['wall_ms'] / dedup['kcache'][0]['wall_ms']
        for peer, rows in dedup['peers'].items():
            if isinstance(rows, list):
                out[f'{peer} compiles for N={rows[-1]["clients"]}'] = rows[-1]['compiles']
                out[f'{peer} wall N={rows[-1]["clients"]} / kcache wall'] = rows[-1]['wall_ms'] / last['wall_ms']
    comp = r.get('compile')
    if comp:
        for kind, row in comp.items():
            out[f'kcache miss / in-process NVRTC ({kind})'] = row['kcache_ms'] / row['nvrtc_ms']
            for peer in ('ccache', 'sccache'):
                if row.get(peer + '_ms'):
                    out[f'{peer} miss (nvcc) / kcache miss ({kind})'] = row[peer + '_ms'] / row['kcache_ms']
    pre = r.get('prefetch')
    if pre:
        out['kcache-pack verify / zstd|xxhsum stream'] = pre['verify_vs_stream']
        out['kcached prefetch+publish / zstd|xxhsum stream'] = pre['kcached_vs_stream']
    scale = r.get('scale')
    if scale and len(scale['startup']) > 1:
        first, last = scale['startup'][0], scale['startup'][-1]
        out[f'hit p50 at {last["entries"]} / at {first["entries"]} entries'] = last['hit_p50_us'] / first['hit_p50_us']
    return out


def tables(r):
    md = []
    if 'hits' in r:
        h = r['hits']
        md += ['### Hit latency', '',
               '| clients | hit p50 | hit p99 | hit p999 | hits/s | floor p50 | floor p99 | floor/s | p50 ratio | p99 ratio |',
               '|---|---|---|---|---|---|---|---|---|---|']
        for row in h['clients']:
            k, f = row['kcache'], row['floor']
            md.append(f'| {row["clients"]} | {fmt(k["p50_us"])} µs | {fmt(k["p99_us"])} µs | {fmt(k["p999_us"])} µs '
                      f'| {fmt(k["per_sec"], 0)} | {fmt(f["p50_us"])} µs | {fmt(f["p99_us"])} µs | {fmt(f["per_sec"], 0)} '
                      f'| {row["p50_ratio"]:.2f}× | {row["p99_ratio"]:.2f}× |')
        md += ['', '| per-hit cost of | p50 |', '|---|---|',
               f'| kcache hit, 1 client | {fmt(h["clients"][0]["kcache"]["p50_us"])} µs |',
               f'| stat()+open()+close() of the module file | {fmt(h["statopen"]["p50_us"])} µs |']
        for peer, p in h['peers'].items():
            md.append(f'| {peer} hit (`{peer} nvcc -c -cubin`, process start included) | '
                      + (f'{fmt(p["hit_ms"] * 1e3, 0)} µs |' if 'hit_ms' in p else f'skipped: {p["skipped"]} |'))
        md.append('')
    if 'dedup' in r:
        d = r['dedup']
        md += ['### Concurrent-miss dedup (medium module)', '',
               '| N | kcache compiles | kcache wall | ccache compiles | ccache wall | sccache compiles | sccache wall |',
               '|---|---|---|---|---|---|---|']
        for i, row in enumerate(d['kcache']):
            cells = [str(row['clients']), str(row['compiles']), f'{fmt(row["wall_ms"], 0)} ms']
            for peer in ('ccache', 'sccache'):
                rows = d['peers'].get(peer)
                if isinstance(rows, list):
                    cells += [str(rows[i]['compiles']), f'{fmt(rows[i]["wall_ms"], 0)} ms']
                else:
                    cells += ['—', '—']
            md.append('| ' + ' | '.join(cells) + ' |')
        md.append('')
    if 'compile' in r:
        md += ['### Compile (miss) cost, median', '',
               '| module | cubin | in-process NVRTC | kcache miss | overhead | nvcc | ccache miss | sccache miss |',
               '|---|---|---|---|---|---|---|---|']
        for kind, row in r['compile'].items():
            md.append(f'| {kind} | {row["cubin_bytes"]:,} B | {fmt(row["nvrtc_ms"])} ms | {fmt(row["kcache_ms"])} ms '
                      f'| {row["overhead"] * 100:+.1f}% | {fmt(row.get("nvcc_ms"), 0)} ms '
                      f'| {fmt(row.get("ccache_ms"), 0)} ms | {fmt(row.get("sccache_ms"), 0)} ms |')
        md.append('')
    if 'prefetch' in r:
        p = r['prefetch']
        md += ['### Prefetch', '',
               '| modules | decompressed | zstd ratio | zstd\\|xxhsum stream | per file | kcache-pack verify | kcached prefetch+publish |',
               '|---|---|---|---|---|---|---|',
               f'| {p["modules"]:,} | {fmt(p["decompressed_mb"], 0)} MB | {p["zstd_ratio"]:.1f} | {fmt(p["stream_mb_s"], 0)} MB/s '
               f'| {fmt(p["per_file_mb_s"])} MB/s | {fmt(p["verify_mb_s"], 0)} MB/s | {fmt(p["kcached_mb_s"], 0)} MB/s |', '']
    if 'scale' in r:
        s = r['scale']
        md += ['### Scale', '',
               '| index entries | index file | serving after | reconciled after | RSS | hit p50 | hit p99 | floor p50 |',
               '|---|---|---|---|---|---|---|---|']
        for row in s['startup']:
            md.append(f'| {row["entries"]:,} | {fmt(row["index_mib"])} MiB | {row["answered_s"]:.2f} s '
                      f'| {row["reconciled_s"]:.2f} s | {fmt(row["rss_mib"])} MiB | {fmt(row["hit_p50_us"])} µs '
                      f'| {fmt(row["hit_p99_us"])} µs | {fmt(row["floor_p50_us"])} µs |')
        md += ['', f'Full GC of {s["gc"]["entries"]:,} entries (`kcachectl gc --max-size 0`): {s["gc"]["wall_s"]:.2f} s.', '']
    return '\n'.join(md)


PLOTS = {
    'latency_vs_clients': '''set terminal pngcairo size 900,540 font ",11"
set output "{out}/latency_vs_clients.png"
set title "Hit latency vs concurrent clients (kcache vs bare Unix-socket round trip)"
set logscale xy 2
set xlabel "concurrent client processes"; set ylabel "latency (µs)"
set key top left; set grid
plot "{data}" using 1:2 with linespoints lw 2 title "kcache hit p50", \\
     "{data}" using 1:3 with linespoints lw 2 title "kcache hit p99", \\
     "{data}" using 1:4 with linespoints dt 2 title "floor p50", \\
     "{data}" using 1:5 with linespoints dt 2 title "floor p99"
''',
    'dedup_vs_n': '''set terminal pngcairo size 1100,440 font ",11"
set output "{out}/dedup_vs_n.png"
set multiplot layout 1,2 title "N workers asking at once for one new module"
set logscale x 2; set grid; set key top left; set xlabel "N (concurrent workers)"
set ylabel "compiles"; set logscale y 2
plot "{data}" using 1:2 with linespoints lw 2 title "kcache", \\
     "{data}" using 1:4 with linespoints lw 4 title "ccache", \\
     "{data}" using 1:6 with linespoints lw 2 dt 2 title "sccache (same as ccache where hidden)"
set ylabel "wall time until all have it (ms)"; unset logscale y; set logscale y 10
plot "{data}" using 1:3 with linespoints lw 2 title "kcache", \\
     "{data}" using 1:5 with linespoints lw 2 title "ccache", \\
     "{data}" using 1:7 with linespoints lw 2 title "sccache"
unset multiplot
''',
}


def plots(r, out, say):
    if shutil.which('gnuplot') is None:
        say('plots: skipped: gnuplot is not installed (tools/install-deps.sh --bench installs it)')
        return []
    made = []
    if 'hits' in r:
        data = f'{out}/latency_vs_clients.dat'
        with open(data, 'w') as f:
            for row in r['hits']['clients']:
                k, fl = row['kcache'], row['floor']
                f.write(f'{row["clients"]} {k["p50_us"]} {k["p99_us"]} {fl["p50_us"]} {fl["p99_us"]}\n')
        made.append(('latency_vs_clients', data))
    if 'dedup' in r:
        data = f'{out}/dedup_vs_n.dat'
        peers = r['dedup']['peers']
        with open(data, 'w') as f:
            for i, row in enumerate(r['dedup']['kcache']):
                cells = [row['clients'], row['compiles'], row['wall_ms']]
                for peer in ('ccache', 'sccache'):
                    rows = peers.get(peer)
                    cells += [rows[i]['compiles'], rows[i]['wall_ms']] if isinstance(rows, list) else ['NaN', 'NaN']
                f.write(' '.join(map(str, cells)) + '\n')
        made.append(('dedup_vs_n', data))
    pngs = []
    for name, data in made:
        script = PLOTS[name].format(out=out, data=data)
        res = subprocess.run(['gnuplot'], input=script, text=True, capture_output=True)
        if res.returncode != 0:
            say(f'plot {name}: gnuplot failed: {res.stderr.strip()}')
        else:
            pngs.append(f'{out}/{name}.png')
    return pngs


def write(r, out, say):
    with open(f'{out}/results.json', 'w') as f:
        json.dump(r, f, indent=1)
    r['ratios'] = ratios(r)
    with open(f'{out}/results.json', 'w') as f:
        json.dump(r, f, indent=1)
    with open(f'{out}/results.md', 'w') as f:
        f.write(tables(r))
    pngs = plots(r, out, say)
    say('')
    say('ratios (each pair measured in this run):')
    for k, v in r['ratios'].items():
        say(f'  {k:55s} {v:10.2f}' if isinstance(v, float) else f'  {k:55s} {v:10}')
    say(f'tables: {out}/results.md' + (f'; plots: {", ".join(pngs)}' if pngs else ''))
