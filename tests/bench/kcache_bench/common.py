"""What every scenario needs: the built programs, a kcached to drive, JSON-speaking children.

Contract: `Tools(build_dir)` names the built programs and fails early, with the missing path,
if one is absent. `Daemon` starts a real kcached on its own cache dir and socket (no D-Bus),
waits until it answers `status` and its start-up reconcile is done, and stops it on exit;
`start()` returns the seconds until it answered and until it was reconciled.
"""
import json
import os
import signal
import subprocess
import time


class BenchError(RuntimeError):
    pass


class Tools:
    def __init__(self, build_dir):
        b = os.path.abspath(build_dir)
        self.kcached = f'{b}/daemon/kcached'
        self.kcachectl = f'{b}/tools/kcachectl/kcachectl'
        self.pack = f'{b}/tools/kcache-pack/kcache-pack'
        self.client = f'{b}/tests/bench/kcache-bench-client'
        self.nvrtc = f'{b}/tests/bench/kcache-bench-nvrtc'
        self.synth = f'{b}/tests/bench/kcache-synth-cache'
        for path in vars(self).values():
            if not os.access(path, os.X_OK):
                raise BenchError(f'{path} is not built (run: ninja -C {build_dir})')


def run_json(cmd, timeout=None):
    """Runs a program that prints a JSON object on stdout (alone, or as its last line)."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise BenchError(f'{" ".join(map(str, cmd))} exited {r.returncode}: {r.stderr.strip()[-2000:]}')
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return json.loads(r.stdout.strip().splitlines()[-1])


def rss_kib(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0


class Daemon:
    def __init__(self, tools, workdir, name='kcached', extra=()):
        self.tools = tools
        self.cache_dir = f'{workdir}/{name}-cache'
        self.socket = f'{workdir}/{name}.sock'
        self.log = f'{workdir}/{name}.log'
        self.extra = list(extra)
        self.proc = None

    def start(self, timeout=600):
        cmd = [self.tools.kcached, '--cache-dir', self.cache_dir, '--socket', self.socket,
               '--devices', 'sm_90a', '--bus-address', 'none', '--log-level', 'warn'] + self.extra
        t0 = time.monotonic()
        with open(self.log, 'ab') as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=log)
        answered = None
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise BenchError(f'kcached exited {self.proc.returncode}; see {self.log}')
            s = self.try_status()
            if s is not None:
                answered = answered or time.monotonic() - t0
                if s.get('reconciled'):
                    return answered, time.monotonic() - t0
            time.sleep(0.005)
        raise BenchError(f'kcached did not become ready in {timeout} s; see {self.log}')

    def try_status(self):
        r = subprocess.run([self.tools.kcachectl, '--socket', self.socket, 'status', '--json'],
                           capture_output=True, text=True)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def status(self):
        s = self.try_status()
        if s is None:
            raise BenchError(f'kcached does not answer on {self.socket}; see {self.log}')
        return s

    def ctl(self, *args, timeout=3600):
        return run_json([self.tools.kcachectl, '--socket', self.socket, *args, '--json'], timeout)

    def compiles(self):
        return self.status()['stats']['compiles']

    def rss_kib(self):
        return rss_kib(self.proc.pid)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


def median(xs):
    s = sorted(xs)
    return s[len(s) // 2] if s else 0.0
