"""A system under test that lives in a virtualenv of its own, apart from converge's (Flink, Pathway).

Its environment sits under the user's cache: `$CONVERGE_SYSTEMS_DIR` or
`$XDG_CACHE_HOME/converge/systems` (default `~/.cache/converge/systems`), one folder per system and
version (`flink-2.3.0/`, `pathway-0.33.0/`) with `venv/` and `system.json`. The adapter program
stays in converge's package and runs under the venv's interpreter, so a newer converge never runs a
stale copy. An install builds the venv in a temporary folder, smoke-checks the adapter (hello and one
small case) and only then renames it into place: a failed install leaves nothing that looks installed.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from queue import Empty, Queue
from types import ModuleType

import converge.reports.progress as progress
from converge.engine.model.errors import UsageError


@dataclass(frozen=True)
class VenvSystem:
    """What differs between two systems installed this way."""

    name: str                 # the folder prefix and system.json's name: "pathway"
    title: str                # for messages: "Pathway"
    default_version: str
    requirement: Callable[[str], str]  # the pip requirement of a version: "pathway==0.33.0"
    size: str                 # what the user waits for: "about 1.6 GB installed; a minute or two"
    adapter: Path             # the adapter program (package data)
    hello_versions: tuple[int, ...]    # what the smoke check offers in its hello
    smoke_case: dict          # one small case of that protocol version
    smoke_final: tuple[tuple, ...]     # its final table
    adapter_env: tuple[tuple[str, str], ...] = ()  # variables the adapter runs with (e.g. off switches)

    @property
    def hint(self) -> str:
        return f"converge systems install {self.name}"


@dataclass(frozen=True)
class InstalledSystem:
    """One installed environment, as its system.json records it."""

    name: str
    version: str
    folder: Path
    python: str
    java: str
    created: str
    smoke: dict
    capabilities: dict | None = None  # the hello's, recorded at the smoke check (None: an older record)
    adapter: Path | None = None
    last_check: dict | None = None    # the last `systems list --check`: {"at", "ok", "message", "seconds"}

    def recorded_check(self) -> dict:
        """The last check this installation passed or failed: `systems list --check`'s, else the install's smoke
        check ({"at", "ok", "message", "seconds"}; "at" is "" when neither recorded it)."""
        if self.last_check:
            return self.last_check
        return {"at": self.created, "ok": self.smoke.get("ok"), "message": self.smoke.get("message", ""),
                "seconds": self.smoke.get("seconds")}

    @property
    def interpreter(self) -> Path:
        return self.folder / "venv" / "bin" / "python"

    def command(self) -> list[str]:
        """The adapter's argv: `-I` keeps the user's PYTHON* variables and site-packages out of it; `-B` keeps
        its bytecode out of converge's source folder (-I ignores PYTHONDONTWRITEBYTECODE)."""
        return [str(self.interpreter), "-I", "-B", str(self.adapter)]


def systems_dir() -> Path:
    """Where system environments live; CONVERGE_SYSTEMS_DIR overrides the user cache."""
    override = os.environ.get("CONVERGE_SYSTEMS_DIR")
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "converge" / "systems"


def version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.\-]", version))


def installed(system: VenvSystem) -> list[InstalledSystem]:
    """Every environment of `system` with a readable system.json, oldest version first."""
    root = systems_dir()
    found = []
    for record in sorted(root.glob(f"{system.name}-*/system.json")) if root.is_dir() else []:
        try:
            doc = json.loads(record.read_text(encoding="utf-8"))
            if doc["name"] != system.name:
                continue
            found.append(InstalledSystem(doc["name"], doc["version"], record.parent, doc["python"],
                                         doc.get("java", "-"), doc["created"], doc.get("smoke", {}),
                                         doc.get("capabilities"), system.adapter,
                                         doc.get("last_check") if isinstance(doc.get("last_check"), dict) else None))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a half-written or foreign folder is not an installation
    return sorted(found, key=lambda s: version_key(s.version))


def find(system: VenvSystem, version: str | None = None) -> InstalledSystem:
    """The installed environment of `version` (None: the newest); UsageError naming the install command if none."""
    systems = installed(system)
    if version is not None:
        systems = [s for s in systems if s.version == version]
    if not systems:
        what = f"{system.title} {version}" if version else system.title
        flag = f" --version {version}" if version else ""
        raise UsageError(f"{what} is not installed under {systems_dir()}; run `{system.hint}{flag}`")
    return systems[-1]


def build(system: VenvSystem, version: str, *, smoke: Callable[[list[str], str], dict], extra: dict,
          python: str | None = None, echo: Callable[[str], None] = lambda line: None) -> Path:
    """Create the environment of `version` (idempotent: an installed one is returned as it is); `smoke` checks
    the adapter's command and returns the smoke record with the hello's capabilities; `extra` joins system.json."""
    if not re.fullmatch(r"\d+(\.\d+){1,3}", version):
        raise UsageError(f"--version {version!r}: expected a release number such as {system.default_version}")
    root = systems_dir()
    target = root / f"{system.name}-{version}"
    if (target / "system.json").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{system.name}-{version}-", dir=root))
    try:
        base = python or base_python()
        echo(f"creating a virtualenv with {base} in {work}")
        run_step([base, "-m", "venv", str(work / "venv")], "python -m venv", echo=echo)
        interpreter = str(work / "venv" / "bin" / "python")
        requirement = system.requirement(version)
        echo(f"pip install {requirement} ({system.size}); pip's own lines follow")
        run_step([interpreter, "-m", "pip", "--disable-pip-version-check", "install", requirement],
                 f"pip install {requirement}", echo=echo)
        py_version = run_step([interpreter, "-c", "import platform; print(platform.python_version())"],
                              "python --version").strip()
        echo("smoke check: handshake and one join through the adapter")
        with heartbeat("smoke check", echo):
            check = smoke([interpreter, "-I", "-B", str(system.adapter)], version)
        if not check["ok"]:
            raise UsageError(f"the {system.title} {version} environment was built but its smoke check failed: "
                             f"{check['message']}")
        capabilities = check.pop("capabilities")
        record = {"name": system.name, "version": version, "python": py_version, **extra,
                  "created": datetime.now(UTC).isoformat(timespec="seconds"), "smoke": check,
                  "capabilities": capabilities}
        (work / "system.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        try:
            work.rename(target)
        except OSError:
            if not (target / "system.json").is_file():  # not another install that won the race
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target


def base_python() -> str:
    """A real interpreter, not converge's venv (a venv made from a venv would point at it)."""
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    return str(base) if base.exists() else sys.executable


def run_step(argv: list[str], what: str, *, echo: Callable[[str], None] | None = None,
             timeout: float = 1800.0) -> str:
    """One step of an install, its stdout; UsageError with its last lines when it fails. With `echo`, each line
    it prints (stdout and stderr: pip's own progress) is passed on as it comes, and while it prints nothing a
    "still running" line every HEARTBEAT_SECONDS (pip unpacks PyFlink silently for minutes: issue 41 row 4)."""
    if echo is None:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.SubprocessError) as exc:
            raise UsageError(f"{what} failed: {exc}") from None
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
            raise UsageError(f"{what} failed (exit {done.returncode}):\n{tail}")
        return done.stdout
    try:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", start_new_session=True)
    except OSError as exc:
        raise UsageError(f"{what} failed: {exc}") from None
    lines = _streamed(process, what, echo, timeout)
    if process.wait() != 0:
        tail = "\n".join(line for line in lines[-15:])
        raise UsageError(f"{what} failed (exit {process.returncode}):\n{tail}")
    return "\n".join(lines) + ("\n" if lines else "")


def _streamed(process: subprocess.Popen, what: str, echo: Callable[[str], None], timeout: float) -> list[str]:
    """The lines of `process` (stdout and stderr as one stream), each echoed as it comes; a heartbeat line
    while none comes; the process group killed and UsageError past `timeout`."""
    queue: Queue[str | None] = Queue()

    def read() -> None:
        assert process.stdout is not None  # opened with stdout=PIPE
        for line in process.stdout:
            queue.put(line.rstrip("\n"))
        queue.put(None)

    threading.Thread(target=read, name="converge-install-output", daemon=True).start()
    started, lines = time.monotonic(), list[str]()
    while True:
        waited = time.monotonic() - started
        if waited > timeout:
            os.killpg(process.pid, 9)
            process.wait()
            raise UsageError(f"{what} failed: no end after {timeout:.0f} s")
        try:
            line = queue.get(timeout=min(progress.HEARTBEAT_SECONDS, max(timeout - waited, 0.01)))
        except Empty:
            echo(f"{what}: still running ({time.monotonic() - started:.0f} s)")
            continue
        if line is None:
            return lines
        lines.append(line)
        echo(f"  {line}")


def heartbeat(what: str, echo: Callable[[str], None]) -> contextlib.AbstractContextManager[None]:
    """While the body runs (a step that prints nothing: the smoke check starts a JVM), "what: still running
    (N s)" every HEARTBEAT_SECONDS."""
    return progress.beating(progress.HEARTBEAT_SECONDS,
                            lambda seconds: echo(f"{what}: still running ({seconds:.0f} s)"))


def smoke_check(system: VenvSystem, command: list[str], version: str | None = None, *, with_case: bool = True,
                timeout: float = 180.0) -> dict:
    """Start the adapter, handshake, run the system's smoke case (when `with_case`), shut down: {"ok", "message",
    "seconds", "capabilities"} (the hello's capabilities, None without a hello)."""
    start = time.monotonic()
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True,
                                   env={**os.environ, **dict(system.adapter_env)})
    except OSError as exc:
        return {"ok": False, "message": f"cannot start {command[0]}: {exc}", "seconds": 0.0, "capabilities": None}
    lines = [json.dumps({"type": "hello", "protocol": "converge-adapter", "versions": list(system.hello_versions)})]
    if with_case:
        lines.append(json.dumps({"type": "run", "request": 1, "cases": [system.smoke_case]}))
    lines.append(json.dumps({"type": "shutdown"}))
    try:
        out, err = process.communicate("\n".join(lines) + "\n", timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        return {"ok": False, "message": f"no answer within {timeout:.0f} s", "seconds": round(timeout, 1),
                "capabilities": None}
    seconds = round(time.monotonic() - start, 1)
    answers = []
    for line in out.splitlines():
        try:
            answers.append(json.loads(line))
        except ValueError:
            return {"ok": False, "message": f"not a protocol line on stdout: {line[:200]!r}", "seconds": seconds,
                    "capabilities": None}
    tail = " | ".join(err.strip().splitlines()[-5:])
    problem = None
    if not answers or answers[0].get("type") != "hello":
        problem = f"no hello (exit {process.returncode}; stderr: {tail})"
    elif version is not None and answers[0].get("system", {}).get("version") != version:
        problem = f"the adapter reports {system.title} {answers[0].get('system')}, not {version}"
    elif with_case:
        result = answers[1]["results"][0] if len(answers) > 1 and answers[1].get("type") == "results" else None
        expected = sorted(json.dumps(list(row)) for row in system.smoke_final)
        if result is None or result.get("status") != "ok" or _final_rows(result) != expected:
            problem = f"the smoke join answered {answers[1:] or 'nothing'} (stderr: {tail})"
    if problem is None and process.returncode != 0:
        problem = f"the adapter exited with {process.returncode} after shutdown (stderr: {tail})"
    hello = answers[0] if answers and answers[0].get("type") == "hello" else {}
    return {"ok": problem is None, "message": problem or "ok", "seconds": seconds,
            "capabilities": hello.get("capabilities")}


def _final_rows(result: dict) -> list[str] | None:
    """A smoke result's final multiset as sorted JSON rows: its `final`, or its `changelog` folded (an adapter with
    `output: changelog`, as Flink's, answers no `final`); None when it has neither."""
    if isinstance(result.get("final"), list):
        return sorted(map(json.dumps, result["final"]))
    if not isinstance(result.get("changelog"), list):
        return None
    held: dict[str, int] = {}
    for kind, *row in result["changelog"]:
        text = json.dumps(row)
        held[text] = held.get(text, 0) + (1 if kind in ("+I", "+U") else -1)
    return sorted(text for text, count in held.items() for _ in range(max(count, 0)))


def rewrite_capabilities(installed_system: InstalledSystem, capabilities: dict) -> None:
    """system.json of an older install, given the capabilities its adapter declares now (never half-written)."""
    _rewrite(installed_system, capabilities=capabilities)


def record_check(installed_system: InstalledSystem, check: dict) -> None:
    """system.json given a live check's outcome (and the capabilities its hello declared, when the record has
    none): `converge systems list` shows it from there, without starting the adapter again."""
    fields: dict = {"last_check": {"at": datetime.now(UTC).isoformat(timespec="seconds"), "ok": bool(check["ok"]),
                                   "message": check["message"], "seconds": check["seconds"]}}
    if installed_system.capabilities is None and isinstance(check.get("capabilities"), dict):
        fields["capabilities"] = check["capabilities"]
    try:
        _rewrite(installed_system, **fields)
    except (OSError, ValueError):  # a read-only cache: the check's outcome is shown, just not kept
        pass


def _rewrite(installed_system: InstalledSystem, **fields: object) -> None:
    """system.json with `fields` replaced, the rest kept (never half-written)."""
    record = installed_system.folder / "system.json"
    doc = json.loads(record.read_text(encoding="utf-8"))
    doc.update(fields)
    temporary = record.with_name("system.json.tmp")
    temporary.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    temporary.replace(record)


def record_capabilities(system: VenvSystem, installed_system: InstalledSystem,
                        handshake: Callable[[list[str], str], dict]) -> InstalledSystem:
    """An installation recorded by an older converge, given the capabilities its adapter declares now:
    `handshake(command, version)` is the system's smoke check without a case; system.json is rewritten with them.
    UsageError when the handshake fails."""
    check = handshake(installed_system.command(), installed_system.version)
    if not check["ok"] or not isinstance(check["capabilities"], dict):
        raise UsageError(f"{system.title} {installed_system.version} in {installed_system.folder} does not answer a "
                         f"handshake: {check['message']}")
    rewrite_capabilities(installed_system, check["capabilities"])
    return find(system, installed_system.version)


def program_module(program: Path, name: str) -> ModuleType:
    """A module of an adapter program, for converge's own tests of it. The program runs under its environment's
    interpreter and imports its modules as plain scripts from its own folder; loading them the same way here keeps
    one copy of that code and checks the very files the system runs."""
    if str(program) not in sys.path:
        sys.path.insert(0, str(program))
    return importlib.import_module(name)


def features(system: VenvSystem, capabilities: dict | None, version: str) -> tuple[str, str]:
    """(what the installation honours, what it lacks) as `converge systems list` shows them, from its
    capabilities: the settings it honours, and the adapter's sentence for each it lacks."""
    if not capabilities:
        return "not recorded", f"run `{system.hint} --version {version}` again to record them"
    honours = ", ".join(capabilities.get("settings") or []) or "none"
    lacks = "; ".join((capabilities.get("lacks") or {}).values()) or "-"
    return honours, lacks
