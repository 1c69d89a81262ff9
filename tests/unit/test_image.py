"""The production image (docs/operations.md): no virtual environment, database, secrets
or demo passwords in it, the SPA built inside it, and a non-root user.

No Docker engine runs here, so the build context is computed the way Docker computes it
from ``.dockerignore``, and the Dockerfile is read instruction by instruction.

Docker's rules for ``.dockerignore`` (moby's patternmatcher and BuildKit's ignore-file
reader), as implemented below:

- A line starting with ``#`` is a comment; the others are trimmed, blank ones skipped.
- ``!`` makes an exception. The rest is cleaned as Go's ``filepath.Clean`` cleans a path
  (so ``foo/``, ``./foo`` and ``foo`` are one pattern) and one leading ``/`` is dropped.
- ``*`` and ``?`` never cross a ``/``; ``**`` crosses any number of folders, none
  included; ``\\`` escapes the next character; ``[...]`` is a class.
- A pattern that matches a folder matches everything inside it.
- Every pattern is tried in order and the last one that matches decides.
- The archiver skips a folder that is excluded unless an exception names a path inside
  it (the classic builder's rule; BuildKit agrees while exceptions are plain paths,
  which ``test_exceptions_are_plain_paths`` keeps true).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from tests.conftest import service_missing

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
COMPOSE_FILE = ROOT / "docker-compose.yml"

# What a working checkout holds besides the repository's files: none of it may reach
# the image (the virtual environment, the embedded database and the demo passwords,
# secrets, node_modules and a local frontend build, caches, git's own files).
PLANTED = [
    ".venv/bin/python",
    ".venv/lib/python3.11/site-packages/torch/__init__.py",
    "var/db.sqlite3",
    "var/demo-accounts.json",
    "var/mining/0123abcd/shard-000.pt",
    "var/broker/queue/message.msg",
    "var/exports/study-1.jsonl",
    ".env",
    "config/.env",
    "db.sqlite3",
    "frontend/node_modules/vite/package.json",
    "frontend/src/node_modules/leftover.js",
    "frontend/dist/.vite/manifest.json",
    "frontend/dist/assets/main-0123abcd.js",
    "annotate/__pycache__/models.cpython-311.pyc",
    "mining/core/__pycache__/kernels.step-1.py311.nbi",
    "reports/stray.pyc",
    ".pytest_cache/v/cache/lastfailed",
    ".mypy_cache/3.11/annotate/models.data.json",
    ".ruff_cache/0.9.0/123",
    ".hypothesis/examples/0123/abcd",
    ".git/config",
]

# What the image is built from: the Django project and the frontend's build inputs.
NEEDED_FILES = [
    "manage.py",
    "requirements/base.txt",
    "requirements/constraints.txt",
    "requirements/data.txt",
    "config/settings.py",
    "config/gunicorn.conf.py",
    "config/templates/frontend/index.html",
    "frontend/package.json",
    "frontend/package-lock.json",
    "frontend/vite.config.ts",
    "frontend/tsconfig.json",
    "frontend/src/main.tsx",
]
# Every repository file under these goes in.
NEEDED_FOLDERS = ["config/", "annotate/", "mining/", "reports/", "requirements/", "frontend/src/"]

ROOT_USERS = {"root", "0", "root:root", "0:0"}


# --- .dockerignore, the way Docker reads it ------------------------------------------------


def _go_clean(path: str) -> str:
    """Go's ``filepath.Clean`` on a slash-separated path."""
    if not path:
        return "."
    cleaned = posixpath.normpath(path)
    if cleaned.startswith("//"):  # POSIX keeps two leading slashes; Go keeps one
        cleaned = "/" + cleaned.lstrip("/")
    return cleaned


def read_dockerignore(text: str) -> list[str]:
    """The patterns of a ``.dockerignore`` file, cleaned, ``!`` kept in front."""
    patterns = []
    for number, line in enumerate(text.splitlines()):
        if number == 0:
            line = line.removeprefix("\ufeff")
        if line.startswith("#"):
            continue
        pattern = line.strip()
        if not pattern:
            continue
        invert = pattern.startswith("!")
        if invert:
            pattern = pattern[1:].strip()
        if pattern:
            pattern = _go_clean(pattern)
            if len(pattern) > 1 and pattern.startswith("/"):
                pattern = pattern[1:]
        patterns.append("!" + pattern if invert else pattern)
    return patterns


@dataclass
class Pattern:
    text: str
    exception: bool
    kind: str  # "exact", "prefix" (a trailing **), "suffix" (a leading **) or "regex"
    regex: re.Pattern[str] | None

    @classmethod
    def compile(cls, raw: str) -> Pattern:
        raw = _go_clean(raw.strip())
        exception = raw.startswith("!")
        if exception:
            raw = raw[1:]
            if not raw:
                raise ValueError('illegal exception pattern: "!"')
        regex, kind, i = ["^"], "exact", 0
        while i < len(raw):
            start, ch = i, raw[i]
            i += 1
            if ch == "*" and raw[i : i + 1] == "*":
                i += 1
                if raw[i : i + 1] == "/":
                    i += 1
                if i == len(raw):
                    if kind == "exact":
                        kind = "prefix"
                    else:
                        regex.append(".*")
                        kind = "regex"
                else:
                    regex.append("(.*/)?")
                    kind = "regex"
                if start == 0:
                    kind = "suffix"
            elif ch == "*":
                regex.append("[^/]*")
                kind = "regex"
            elif ch == "?":
                regex.append("[^/]")
                kind = "regex"
            elif ch in ".+()|{}$":
                regex.append("\\" + ch)
            elif ch == "\\":
                if i < len(raw):
                    regex.append("\\" + raw[i])
                    i += 1
                    kind = "regex"
                else:
                    regex.append("\\")
            elif ch in "[]":
                regex.append(ch)
                kind = "regex"
            else:
                regex.append(ch)
        compiled = None
        if kind == "regex":
            try:
                compiled = re.compile("".join(regex) + "$")
            except re.error as exc:
                raise ValueError(f"bad pattern {raw!r}: {exc}") from exc
        return cls(raw, exception, kind, compiled)

    def matches(self, path: str) -> bool:
        if self.kind == "exact":
            return path == self.text
        if self.kind == "prefix":
            return path.startswith(self.text[:-2])
        if self.kind == "suffix":
            suffix = self.text[2:]
            return path.endswith(suffix) or (suffix[:1] == "/" and path == suffix[1:])
        assert self.regex is not None
        return self.regex.match(path) is not None


class DockerIgnore:
    def __init__(self, patterns: list[str]) -> None:
        self.patterns = [Pattern.compile(p) for p in patterns if p.strip()]

    @classmethod
    def of(cls, root: Path) -> DockerIgnore:
        path = root / ".dockerignore"
        return cls(read_dockerignore(path.read_text()) if path.is_file() else [])

    def excludes(self, path: str) -> bool:
        """Whether ``path`` (relative, slash-separated) stays out of the context."""
        parents = path.split("/")[:-1]
        excluded = False
        for pattern in self.patterns:
            # An exception can only undo an exclusion, an exclusion only add one.
            if pattern.exception != excluded:
                continue
            hit = pattern.matches(path) or any(
                pattern.matches("/".join(parents[: i + 1])) for i in range(len(parents))
            )
            if hit:
                excluded = not pattern.exception
        return excluded

    def may_let_in_below(self, folder: str) -> bool:
        return any((p.text + "/").startswith(folder + "/") for p in self.patterns if p.exception)


def build_context(root: Path) -> set[str]:
    """The files (and links, sent as links) that ``docker build root`` sends."""
    ignore = DockerIgnore.of(root)
    context: set[str] = set()
    for folder, subfolders, files in os.walk(root):
        here = Path(folder).relative_to(root).as_posix()
        prefix = "" if here == "." else here + "/"
        walk_into = []
        for name in subfolders:
            path = prefix + name
            if os.path.islink(os.path.join(folder, name)):
                if not ignore.excludes(path):
                    context.add(path)
            elif not ignore.excludes(path) or ignore.may_let_in_below(path):
                walk_into.append(name)
        subfolders[:] = walk_into
        context.update(prefix + name for name in files if not ignore.excludes(prefix + name))
    return context


def _repository_files() -> list[str]:
    """The working tree as git sees it: tracked files and new ones it does not ignore."""
    result = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    return [p for p in result.stdout.decode().split("\0") if p and (ROOT / p).is_file()]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the working tree with a developer's local files planted in it."""
    root = tmp_path_factory.mktemp("checkout")
    for path in [*_repository_files(), ".dockerignore"]:
        source = ROOT / path
        if source.is_file():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / path)
    for path in PLANTED:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("planted by tests/unit/test_image.py\n")
    return root


# The matcher itself: the examples of Docker's documentation of .dockerignore first, then
# the rules this project's file relies on.


@pytest.mark.parametrize(
    ("patterns", "path", "excluded"),
    [
        (["*/temp*"], "somedir/temporary.txt", True),
        (["*/temp*"], "temporary.txt", False),
        (["*/temp*"], "somedir/temp/file", True),
        (["*/*/temp*"], "somedir/subdir/temporary.txt", True),
        (["temp?"], "tempa", True),
        (["temp?"], "tempab", False),
        (["**/*.go"], "main.go", True),
        (["**/*.go"], "a/b/main.go", True),
        (["*.md", "!README*.md", "README-secret.md"], "README.md", False),
        (["*.md", "!README*.md", "README-secret.md"], "README-secret.md", True),
        (["*.md", "!README*.md", "README-secret.md"], "notes.md", True),
        (["*.md", "README-secret.md", "!README*.md"], "README-secret.md", False),
        (["/var/"], "var/db.sqlite3", True),
        (["./var"], "var/db.sqlite3", True),
        (["var"], "src/var/x", False),
        (["**/node_modules"], "frontend/node_modules/vite/x.js", True),
        (["**/node_modules"], "node_modules/vite/x.js", True),
        (["docs/**"], "docs/a/b.md", True),
        (["docs/**"], "docs", False),
        (["*", "!config/"], "config/settings.py", False),
        (["*", "!config/"], "configs/settings.py", True),
        (["*", "!frontend/src", "**/*.test.ts"], "frontend/src/a/b.test.ts", True),
    ],
)
def test_the_matcher_follows_dockers_rules(patterns, path, excluded):
    assert DockerIgnore(read_dockerignore("\n".join(patterns))).excludes(path) is excluded


def test_comments_blank_lines_and_a_bare_exception_are_read_as_docker_reads_them():
    assert read_dockerignore("# a comment\n\n  /var/  \n!  keep/this/ \n") == [
        "var",
        "!keep/this",
    ]
    with pytest.raises(ValueError, match="illegal exception"):
        DockerIgnore(["!"])


# The real .dockerignore over a checkout.


def test_the_build_context_leaves_out_local_environments_data_secrets_and_caches(checkout):
    context = build_context(checkout)
    leaked = sorted(path for path in PLANTED if path in context)
    assert not leaked, f"these would be copied into the image: {leaked}"


def test_the_build_context_holds_what_the_image_is_built_from(checkout):
    context = build_context(checkout)
    missing = [path for path in NEEDED_FILES if path not in context]
    repository = _repository_files()
    missing += [
        path
        for path in repository
        if path.startswith(tuple(NEEDED_FOLDERS))
        and "__pycache__" not in path
        and not path.endswith(".pyc")
        and path not in context
    ]
    assert not missing, f"the image needs these but the context leaves them out: {missing}"
    # Each project app in INSTALLED_APPS is one of those folders.
    apps = {
        app.split(".")[0] for app in settings.INSTALLED_APPS if (ROOT / app.split(".")[0]).is_dir()
    }
    assert apps and all(f"{app}/" in NEEDED_FOLDERS for app in apps)


def test_the_real_checkout_sends_nothing_that_git_ignores():
    context = sorted(build_context(ROOT))
    assert "manage.py" in context
    result = subprocess.run(
        ["git", "check-ignore", "--stdin", "-z"],
        cwd=ROOT,
        input="\0".join(context).encode(),
        capture_output=True,
    )
    assert result.returncode in (0, 1), result.stderr.decode()
    ignored = [p for p in result.stdout.decode().split("\0") if p]
    assert not ignored, f"ignored by git, yet in the build context: {ignored[:20]}"


def test_exceptions_are_plain_paths():
    # With wildcards in an exception, the classic builder and BuildKit walk differently.
    exceptions = [p for p in DockerIgnore.of(ROOT).patterns if p.exception]
    assert all(p.kind == "exact" for p in exceptions), [p.text for p in exceptions]


def _docker_compose_python() -> str:
    compose = shutil.which("docker-compose")
    if compose is None:
        service_missing("docker-compose (Debian package docker-compose) is not installed")
    assert compose is not None
    with open(compose, "rb") as f:
        first = f.readline().decode().strip()
    if not first.startswith("#!"):
        service_missing(f"{compose} is not a Python script")
    return first[2:].split()[0]


_DOCKER_PY_CONTEXT = """
import os, sys, tarfile
from docker.utils.build import tar
root = sys.argv[1]
# As docker.api.build reads .dockerignore before it tars the context.
exclude = []
if os.path.exists(root + "/.dockerignore"):
    with open(root + "/.dockerignore") as f:
        lines = [line.strip() for line in f.read().splitlines()]
    exclude = [line for line in lines if line and line[0] != "#"]
with tarfile.open(fileobj=tar(root, exclude=exclude)) as archive:
    for member in archive.getmembers():
        if not member.isdir():
            print(member.name)
"""


def test_docker_compose_v1_sends_the_same_context(checkout):
    """docker-compose v1 tars the context with docker-py: ask it, beside our reading."""
    python = _docker_compose_python()
    result = subprocess.run(
        [python, "-c", _DOCKER_PY_CONTEXT, str(checkout)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0 and "No module named 'docker'" in result.stderr:
        service_missing(f"{python} has no docker-py")
    assert result.returncode == 0, result.stderr
    # docker-py always adds the Dockerfile (BuildKit sends it on the side).
    theirs = set(result.stdout.splitlines()) - {"Dockerfile", ".dockerignore"}
    ours = build_context(checkout) - {"Dockerfile", ".dockerignore"}
    assert theirs == ours


# --- the Dockerfile ------------------------------------------------------------------------


@dataclass
class Instruction:
    keyword: str
    args: str


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[Instruction]

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def index(self, instruction: Instruction) -> int:
        return next(n for n, i in enumerate(self.instructions) if i is instruction)


def dockerfile_stages(text: str) -> list[Stage]:
    """The stages of a Dockerfile; line continuations joined, comments dropped."""
    lines, pending = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    stages: list[Stage] = []
    for line in lines:
        keyword, _, args = line.partition(" ")
        instruction = Instruction(keyword.upper(), args.strip())
        if instruction.keyword == "FROM":
            words = args.split()
            image = next(w for w in words if not w.startswith("--"))
            name = words[-1] if len(words) >= 3 and words[-2].upper() == "AS" else None
            stages.append(Stage(image, name, []))
        elif stages:
            stages[-1].instructions.append(instruction)
    return stages


def _env_of(instructions: list[Instruction]) -> dict[str, str]:
    env: dict[str, str] = {}
    for instruction in instructions:
        if instruction.keyword == "ENV":
            for word in shlex.split(instruction.args):
                key, sep, value = word.partition("=")
                assert sep, f"use ENV KEY=VALUE, not {instruction.args!r}"
                env[key] = value
    return env


def _flags_and_paths(args: str) -> tuple[dict[str, str], list[str]]:
    words = shlex.split(args)
    flags = dict(w[2:].partition("=")[::2] for w in words if w.startswith("--"))
    return flags, [w for w in words if not w.startswith("--")]


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return dockerfile_stages(DOCKERFILE.read_text())


def _node_stage(stages: list[Stage]) -> Stage:
    node = [s for s in stages[:-1] if s.image.startswith("node:")]
    assert node, "no Node stage builds the SPA"
    return node[0]


def _workdir(stage: Stage, before: int) -> str:
    workdirs = [i.args for i in stage.instructions[:before] if i.keyword == "WORKDIR"]
    return workdirs[-1] if workdirs else "/"


def test_a_pinned_node_stage_builds_the_spa(stages):
    node = _node_stage(stages)
    tag = node.image.partition(":")[2]
    assert re.match(r"^\d+\.\d+", tag), f"pin the Node image to a release, not {node.image!r}"
    runs = " && ".join(i.args for i in node.all("RUN"))
    assert "npm ci" in runs and "npm run build" in runs


def test_the_python_stage_copies_the_built_spa_before_collecting_static_files(stages):
    node, final = _node_stage(stages), stages[-1]
    copies = []
    for copy in final.all("COPY"):
        flags, paths = _flags_and_paths(copy.args)
        if flags.get("from") in {node.name, str(stages.index(node))}:
            destination = posixpath.join(_workdir(final, final.index(copy)), paths[-1])
            if paths[0].rstrip("/").endswith("dist"):
                copies.append((final.index(copy), posixpath.normpath(destination)))
    assert copies, "the Python stage does not copy the Node stage's dist/"
    where, destination = copies[0]
    assert destination == "/app/frontend/dist"
    collect = [final.index(i) for i in final.all("RUN") if "collectstatic" in i.args]
    assert collect and min(collect) > where, "collectstatic must run after dist/ is copied"


def test_the_image_runs_as_a_user_it_creates_and_not_as_root(stages):
    final = stages[-1]
    cmd = final.index(final.all("CMD")[-1])
    users = [i for i in final.instructions[:cmd] if i.keyword == "USER"]
    assert users, "no USER before CMD: the processes would run as root"
    user = users[-1].args.split(":")[0]
    assert users[-1].args not in ROOT_USERS and user not in ROOT_USERS
    runs = [i.args for i in final.instructions[: final.index(users[-1])] if i.keyword == "RUN"]
    creates = re.compile(rf"\b(useradd|adduser)\b[^&;]*\s{re.escape(user)}(\s|$)")
    assert any(creates.search(r) for r in runs), f"no RUN creates the user {user!r}"
    data_dir = _env_of(final.instructions)["FFKV_DATA_DIR"]
    assert any(data_dir in r and user in r and ("chown" in r or "-o" in r) for r in runs), (
        f"{data_dir} is not made writable for {user}"
    )


def test_copies_of_the_whole_context_are_filtered_by_dockerignore(stages):
    whole = [
        i.args
        for s in stages
        for i in s.all("COPY") + s.all("ADD")
        if "--from" not in i.args and _flags_and_paths(i.args)[1][0] in {".", "./"}
    ]
    assert not whole or DOCKERIGNORE.is_file()


def _static_root(environment: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-c", "import config.settings as s; print(s.STATIC_ROOT)"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_static_files_are_collected_where_the_running_image_serves_them(stages):
    """collectstatic runs at build time; the server must look in the same folder, and
    that folder must not lie under a volume (the volume would hide it)."""
    final = stages[-1]
    image_env = _env_of(final.instructions)
    run = next(i.args for i in final.all("RUN") if "collectstatic" in i.args)
    command = next(part for part in run.split("&&") if "collectstatic" in part)
    inline = dict(w.partition("=")[::2] for w in shlex.split(command) if re.match(r"^\w+=", w))
    built = _static_root({**image_env, **inline})

    compose = yaml.safe_load(COMPOSE_FILE.read_text())
    web = compose["services"]["web"]
    runtime_env = {**image_env, **{k: str(v) for k, v in web["environment"].items()}}
    runtime_env["SECRET_KEY"] = "a-long-random-production-secret-0123456789"
    served = _static_root(runtime_env)

    assert built == served
    mounts = [volume.split(":")[1] for volume in web.get("volumes", [])]
    assert not any(served == m or served.startswith(m.rstrip("/") + "/") for m in mounts)
