"""The peers kcache is measured against: nvcc alone, and nvcc wrapped by ccache and sccache.

Contract: every peer compiles with `nvcc -c -cubin -arch=<target>` (the form both ccache and
sccache cache: without -c they treat -cubin as a link and pass it through uncached; the
cubin is byte-identical to `nvcc -cubin`'s). Each wrapper gets its own cache directory under
the bench's workdir and, for sccache, its own server port, so the user's caches and servers
are untouched. `available()` says why a peer cannot run; `compiles()` is the wrapper's miss
counter (a real nvcc run), read from its own statistics.
"""
import contextlib
import json
import os
import shutil
import subprocess
import time

CUDA_BIN = '/usr/local/cuda/bin'


class Peer:
    def __init__(self, name, workdir, target='sm_90a'):
        self.name = name
        self.target = target
        self.env = dict(os.environ)
        self.env['PATH'] = CUDA_BIN + ':' + self.env.get('PATH', '')
        self.env['CCACHE_DIR'] = f'{workdir}/ccache'
        self.env['SCCACHE_DIR'] = f'{workdir}/sccache'
        self.env['SCCACHE_SERVER_PORT'] = '4271'
        self.env['SCCACHE_IDLE_TIMEOUT'] = '0'
        self.env.pop('SCCACHE_LOG', None)
        self.wrapper = None if name == 'nvcc' else shutil.which(name)

    def available(self):
        if not os.access(f'{CUDA_BIN}/nvcc', os.X_OK):
            return f'no nvcc in {CUDA_BIN}'
        if self.name != 'nvcc' and self.wrapper is None:
            return f'{self.name} is not installed (tools/install-deps.sh --bench installs it)'
        return None

    def command(self, source, out):
        cmd = ['nvcc', '-c', '-cubin', f'-arch={self.target}', source, '-o', out]
        return ([self.wrapper] if self.wrapper else []) + cmd

    def compile(self, source, out):
        """Seconds for one compile (or cache hit) of `source`, process start included."""
        t = time.monotonic()
        r = subprocess.run(self.command(source, out), env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f'{self.name}: {r.stderr.strip()[-1500:]}')
        return time.monotonic() - t

    def start(self):
        if self.name == 'sccache':
            subprocess.run([self.wrapper, '--start-server'], env=self.env, check=True,
                           capture_output=True)

    def stop(self):
        if self.name == 'sccache':
            subprocess.run([self.wrapper, '--stop-server'], env=self.env, capture_output=True)

    def compiles(self):
        if self.name == 'ccache':
            r = subprocess.run([self.wrapper, '--print-stats'], env=self.env, check=True,
                               capture_output=True, text=True)
            stats = dict(line.split('\t') for line in r.stdout.splitlines() if '\t' in line)
            return int(stats.get('cache_miss', 0))
        if self.name == 'sccache':
            r = subprocess.run([self.wrapper, '--show-stats', '--stats-format', 'json'],
                               env=self.env, check=True, capture_output=True, text=True)
            return int(json.loads(r.stdout)['stats']['cache_misses']['counts'].get('CUDA', 0))
        return None


def all_peers(workdir, target='sm_90a'):
    return [Peer(n, workdir, target) for n in ('nvcc', 'ccache', 'sccache')]


def wrappers(workdir, record, say):
    """ccache and sccache where installed; each absent one is recorded in `record` with why."""
    for peer in all_peers(workdir):
        if peer.name == 'nvcc':
            continue
        why = peer.available()
        if why:
            record[peer.name] = {'skipped': why}
            say(f'{peer.name}: skipped: {why}')
            continue
        yield peer


@contextlib.contextmanager
def running(peer):
    """The peer's server (sccache) up for the block, stopped after it."""
    peer.start()
    try:
        yield peer
    finally:
        peer.stop()
