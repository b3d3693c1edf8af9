"""Run documentation blocks in order in the current directory, as a reader would:

    python run_blocks.py PLAN.json

PLAN is a list of steps {"id", "kind", "path", "line", "text", "file"}: a step with a
"file" writes its text to that file; a python step runs in the namespace the page's
earlier python steps ran in; a shell step runs under `bash -e`. Tracebacks and failed
commands name the Markdown file and line. After a step fails, the last line printed is
"example failed: ID" and the exit status is 1."""
import json
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

FAILED = "example failed: "


def run_python(step: dict, namespace: dict) -> bool:
    # blank lines before the code: tracebacks name the Markdown file's own lines
    code = compile("\n" * step["line"] + step["text"], step["path"], "exec")
    try:
        exec(code, namespace)
    except SystemExit as e:
        if e.code in (None, 0):
            return True
        traceback.print_exc()
        return False
    except BaseException:       # noqa: BLE001 -- any failure of the example is reported
        traceback.print_exc()
        return False
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return True


def run_shell(step: dict, scripts: Path) -> bool:
    # line 1 sets the trap; the block's lines keep their Markdown line numbers
    trap = f"""trap 'status=$?; echo "{step['id'].rsplit(':', 1)[0]}:$LINENO: exit $status: $BASH_COMMAND" >&2' ERR"""
    script = scripts / f"block-{step['line']}.sh"
    script.write_text(trap + "\n" * step["line"] + step["text"] + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.run(["bash", "-e", str(script)]).returncode == 0


def main(argv: list[str]) -> int:
    sys.path[0] = ""        # imports as in an interpreter started in this directory
    steps = json.loads(Path(argv[0]).read_text())
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    with tempfile.TemporaryDirectory(prefix="blocks-") as scripts:
        for step in steps:
            if step["file"]:
                Path(step["file"]).write_text(step["text"] + "\n")
                ok = True
            elif step["kind"] == "python":
                ok = run_python(step, namespace)
            else:
                ok = run_shell(step, Path(scripts))
            if not ok:
                print(f"\n{FAILED}{step['id']}", flush=True)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
