"""The Flink environment: a virtualenv with PyFlink, apart from converge's own, and the command that starts the adapter.

PyFlink pins protobuf 5 and py4j 0.10.9.7, which clash with converge's Spark extra (protobuf 6,
py4j 0.10.9.9), so Flink lives in its own venv under the user's cache:
`$CONVERGE_SYSTEMS_DIR` or `$XDG_CACHE_HOME/converge/systems` (default `~/.cache/converge/systems`),
one folder per version (`flink-2.3.0/`) with `venv/` and `system.json`. The adapter program
itself stays in converge's package (adapter.py next to this file), so a newer converge never
runs a stale copy.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

from converge.engine.model.errors import UsageError

DEFAULT_VERSION = "2.3.0"
MIN_JAVA = 11  # Flink 2.x runs on Java 11, 17 and 21
PROGRAM = Path(__file__).resolve().parent / "program"  # package data: the adapter program, never a converge module
ADAPTER = PROGRAM / "adapter.py"
INSTALL_HINT = "converge systems install flink"


@dataclass(frozen=True)
class InstalledSystem:
    """One installed Flink environment, as its system.json records it."""

    name: str
    version: str
    folder: Path
    python: str
    java: str
    created: str
    smoke: dict
    capabilities: dict | None = None  # the hello's, recorded at the smoke check (None: an older record)

    @property
    def interpreter(self) -> Path:
        return self.folder / "venv" / "bin" / "python"

    def command(self) -> list[str]:
        """The adapter's argv: `-I` keeps the user's PYTHON* variables and site-packages out of it; `-B` keeps
        its bytecode out of converge's source folder (-I ignores PYTHONDONTWRITEBYTECODE)."""
        return [str(self.interpreter), "-I", "-B", str(ADAPTER)]


def systems_dir() -> Path:
    """Where system environments live; CONVERGE_SYSTEMS_DIR overrides the user cache."""
    override = os.environ.get("CONVERGE_SYSTEMS_DIR")
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "converge" / "systems"


def java_version() -> tuple[int, str]:
    """(major version, the first line of `java -version`); UsageError when Java is missing or too old."""
    java = shutil.which("java", path=os.environ.get("PATH"))
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        java = str(Path(home) / "bin" / "java")
    if java is None:
        raise UsageError(f"Flink needs Java {MIN_JAVA} or newer (17 recommended), and no `java` was found on PATH "
                         "or in JAVA_HOME; install a JDK (e.g. `apt-get install openjdk-17-jre-headless`)")
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"`{java} -version` failed: {exc}") from None
    text = (done.stderr or done.stdout).strip()
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if done.returncode != 0 or match is None:
        raise UsageError(f"cannot read the Java version from `{java} -version`: {text[:200]!r}")
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0_x" is Java 8
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise UsageError(f"Flink needs Java {MIN_JAVA} or newer (17 recommended); `{java}` is Java {major}")
    return major, text.splitlines()[0]


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.\-]", version))


def installed() -> list[InstalledSystem]:
    """Every Flink environment with a readable system.json, oldest version first."""
    root = systems_dir()
    found = []
    for record in sorted(root.glob("flink-*/system.json")) if root.is_dir() else []:
        try:
            doc = json.loads(record.read_text(encoding="utf-8"))
            found.append(InstalledSystem(doc["name"], doc["version"], record.parent, doc["python"], doc["java"],
                                         doc["created"], doc.get("smoke", {}), doc.get("capabilities")))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a half-written or foreign folder is not an installation
    return sorted(found, key=lambda s: _version_key(s.version))


def find(version: str | None = None) -> InstalledSystem:
    """The installed environment of `version` (None: the newest); UsageError naming the install command if none."""
    systems = installed()
    if version is not None:
        systems = [s for s in systems if s.version == version]
    if not systems:
        what = f"Flink {version}" if version else "Flink"
        flag = f" --version {version}" if version else ""
        raise UsageError(f"{what} is not installed under {systems_dir()}; run `{INSTALL_HINT}{flag}`")
    return systems[-1]


def adapter_command(version: str | None = None) -> list[str]:
    """The argv that starts the Flink adapter of an installed environment (newest when `version` is None)."""
    return find(version).command()


def install(version: str = DEFAULT_VERSION, *, python: str | None = None, echo=lambda line: None) -> Path:
    """Create the Flink environment of `version` (idempotent: an installed one is returned as it is).

    It is built in a temporary folder next to the final one and renamed into place only after the
    smoke check passed, so a failed or interrupted install leaves nothing that looks installed.
    """
    if not re.fullmatch(r"\d+(\.\d+){1,3}", version):
        raise UsageError(f"--version {version!r}: expected a release number such as {DEFAULT_VERSION}")
    root = systems_dir()
    target = root / f"flink-{version}"
    if (target / "system.json").is_file():
        return target
    _, java_line = java_version()
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".flink-{version}-", dir=root))
    try:
        base = python or _base_python()
        echo(f"creating a virtualenv with {base} in {work}")
        _run([base, "-m", "venv", str(work / "venv")], "python -m venv")
        pip = [str(work / "venv" / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
        echo(f"pip install apache-flink=={version} (about 850 MB; a few minutes on a first download)")
        _run(pip + ["install", f"apache-flink=={version}"], f"pip install apache-flink=={version}")
        py_version = _run([str(work / "venv" / "bin" / "python"), "-c",
                           "import platform; print(platform.python_version())"], "python --version").strip()
        echo("smoke check: handshake and one join through the adapter")
        smoke = smoke_check([str(work / "venv" / "bin" / "python"), "-I", "-B", str(ADAPTER)], version)
        if not smoke["ok"]:
            raise UsageError(f"the Flink {version} environment was built but its smoke check failed: "
                             f"{smoke['message']}")
        capabilities = smoke.pop("capabilities")
        record = {"name": "flink", "version": version, "python": py_version, "java": java_line,
                  "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "smoke": smoke,
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


def _base_python() -> str:
    """A real interpreter, not converge's venv (a venv made from a venv would point at it)."""
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    return str(base) if base.exists() else sys.executable


def _run(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"{what} failed: {exc}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise UsageError(f"{what} failed (exit {done.returncode}):\n{tail}")
    return done.stdout


SMOKE_CASE = {
    "id": "smoke",
    "scenario": {"name": "smoke", "inputs": [
        {"name": "a", "columns": [["k", "BIGINT"], ["x", "VARCHAR"]], "unique_key": None, "changelog_mode": "retract"},
        {"name": "b", "columns": [["k", "BIGINT"], ["y", "VARCHAR"]], "unique_key": None, "changelog_mode": "retract"}],
        "join": {"inputs": ["a", "b"], "types": ["left"], "conditions": ["a.k = b.k"]}, "config": {}, "events": []},
    "changelogs": {"a": [["+I", 1, "a1"], ["+I", 2, "a2"]], "b": [["+I", 1, "b1"], ["-D", 1, "b1"], ["+I", 1, "b2"]]},
}
SMOKE_FINAL = [[1, "a1", 1, "b2"], [2, "a2", None, None]]


def smoke_check(command: list[str], version: str | None = None, *, with_case: bool = True,
                timeout: float = 180.0) -> dict:
    """Start the adapter, handshake, run one LEFT join (when `with_case`), shut down: {"ok", "message", "seconds",
    "capabilities"} (the hello's capabilities, None without a hello)."""
    start = time.monotonic()
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
    except OSError as exc:
        return {"ok": False, "message": f"cannot start {command[0]}: {exc}", "seconds": 0.0, "capabilities": None}
    lines = [json.dumps({"type": "hello", "protocol": "converge-adapter", "versions": [1]})]
    if with_case:
        lines.append(json.dumps({"type": "run", "request": 1, "cases": [SMOKE_CASE]}))
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
        problem = f"the adapter reports Flink {answers[0].get('system')}, not {version}"
    elif with_case:
        result = answers[1]["results"][0] if len(answers) > 1 and answers[1].get("type") == "results" else None
        if result is None or result.get("status") != "ok" or sorted(map(json.dumps, result["final"])) != sorted(
                map(json.dumps, SMOKE_FINAL)):
            problem = f"the smoke join answered {answers[1:] or 'nothing'} (stderr: {tail})"
    if problem is None and process.returncode != 0:
        problem = f"the adapter exited with {process.returncode} after shutdown (stderr: {tail})"
    hello = answers[0] if answers and answers[0].get("type") == "hello" else {}
    return {"ok": problem is None, "message": problem or "ok", "seconds": seconds,
            "capabilities": hello.get("capabilities")}


def record_capabilities(system: InstalledSystem) -> InstalledSystem:
    """An installation recorded by an older converge, given the capabilities its adapter declares now (a handshake
    only); system.json is rewritten with them. UsageError when the handshake fails."""
    check = smoke_check(system.command(), system.version, with_case=False)
    if not check["ok"] or not isinstance(check["capabilities"], dict):
        raise UsageError(f"Flink {system.version} in {system.folder} does not answer a handshake: {check['message']}")
    record = system.folder / "system.json"
    doc = json.loads(record.read_text(encoding="utf-8"))
    doc["capabilities"] = check["capabilities"]
    temporary = record.with_name("system.json.tmp")
    temporary.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    temporary.replace(record)  # never a half-written system.json, which would look like no installation
    return find(system.version)


def features(capabilities: dict | None, version: str) -> tuple[str, str]:
    """(what the installation honours, what it lacks) as `converge systems list` shows them, from its
    capabilities: the settings it honours, and the adapter's sentence for each it lacks."""
    if not capabilities:
        return "not recorded", f"run `{INSTALL_HINT} --version {version}` again to record them"
    honours = ", ".join(capabilities.get("settings") or []) or "none"
    lacks = "; ".join((capabilities.get("lacks") or {}).values()) or "-"
    return honours, lacks


def program_module(name: str) -> ModuleType:
    """A module of the adapter program (`case_plan`, `condition_sql`), for converge's own checks of it.

    The program runs under the Flink environment's interpreter and imports its
    modules as plain scripts from its own folder; loading them the same way
    here keeps one copy of that code and checks the very files Flink runs.
    """
    if str(PROGRAM) not in sys.path:
        sys.path.insert(0, str(PROGRAM))
    return importlib.import_module(name)
