"""Man pages and shell completion scripts from the command tree itself.

    python -m rankwise.cli.manpages --man DIR          one page per verb: rankwise.1, rankwise-coll-tune.1, ...
    python -m rankwise.cli.manpages --completion DIR   bash and zsh completion scripts (make install-completion)

The pages are written from the click commands that `rankwise` runs (rankwise.cli.command()),
so they cannot drift from --help. click-man does not fit: it checks isinstance(param,
click.Option) against the click package, and typer's commands are built from typer's own copy of
click, so every option would be dropped (docs/guide/install.md)."""

from __future__ import annotations

import argparse
import datetime
import inspect
import os
import re
import sys
from pathlib import Path

from typer import _click as click

PROG = "rankwise"

def _plain(text: str | None) -> str:
    # The verbs' help has no rich markup: "[required]", "[default: 0]" are meant literally.
    return inspect.cleandoc(text or "").strip()


def _roff(text: str) -> str:
    """Text as roff reads it: backslashes and hyphens escaped, no line starting with a control
    character ('.' or "'" there would be taken for a request)."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line[:1] in (".", "'") else line for line in text.splitlines())


def _bold(text: str) -> str:
    return f"\\fB{_roff(text)}\\fR"


def _paragraphs(text: str) -> list[str]:
    # click's \b marks a block not to be rewrapped; roff wraps anyway, so keep it as lines.
    return [p.replace("\b\n", "").strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _date() -> str:
    # SOURCE_DATE_EPOCH: reproducible pages, as distributions build them.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
            else datetime.datetime.now(datetime.timezone.utc))
    return when.strftime("%Y-%m-%d")


def _visible(command) -> dict:
    return {name: sub for name, sub in sorted(getattr(command, "commands", {}).items())
            if not getattr(sub, "hidden", False)}


def page(ctx: click.Context, version: str, date: str) -> str:
    """The roff source of the man page of the command in `ctx`."""
    command = ctx.command
    path = ctx.command_path
    name = path.replace(" ", "-")
    out = [f'.TH "{name.upper()}" "1" "{date}" "rankwise {version}" "rankwise manual"',
           ".nh", ".ad l",  # option and page names are not to be hyphenated or stretched
           ".SH NAME", f"{_roff(name)} \\- {_roff(_plain(command.get_short_help_str(limit=200)))}",
           ".SH SYNOPSIS", f".B {_roff(path)}", _roff(" ".join(command.collect_usage_pieces(ctx)))]
    description = _paragraphs(_plain(command.help))
    if description:
        out.append(".SH DESCRIPTION")
        for i, paragraph in enumerate(description):
            out += ([".PP"] if i else []) + [_roff(paragraph)]
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    for title, kind in (("ARGUMENTS", "argument"), ("OPTIONS", "option")):
        records = [p.get_help_record(ctx) for p in params if p.param_type_name == kind]
        records = [r for r in records if r]
        if records:
            out.append(f".SH {title}")
            for term, text in records:
                out += [".TP", _bold(_plain(term)), _roff(" ".join(_plain(text).split()) or "(no description)")]
    subs = _visible(command)
    if subs:
        out.append(".SH COMMANDS")
        for sub_name, sub in subs.items():
            out += [".TP", _bold(sub_name),
                    _roff(_plain(sub.get_short_help_str(limit=200))) + f"\nSee \\fB{_roff(name)}\\-{_roff(sub_name)}\\fR(1)."]
    see = ([ctx.parent.command_path.replace(" ", "-")] if ctx.parent else []) + \
          [f"{name}-{s}" for s in subs]
    if see:
        out += [".SH SEE ALSO", ",\n".join(f"\\fB{_roff(s)}\\fR(1)" for s in see)]
    return "\n".join(out) + "\n"


def write_man_pages(outdir: Path, version: str, date: str | None = None) -> list[Path]:
    """One page per command of the tree, groups included; returns the files written."""
    from rankwise.cli import command

    outdir.mkdir(parents=True, exist_ok=True)
    date = date or _date()
    written: list[Path] = []

    def walk(cmd, ctx: click.Context) -> None:
        path = outdir / (ctx.command_path.replace(" ", "-") + ".1")
        path.write_text(page(ctx, version, date))
        written.append(path)
        for name, sub in _visible(cmd).items():
            walk(sub, click.Context(sub, info_name=name, parent=ctx))

    root = command()
    walk(root, click.Context(root, info_name=PROG))
    return written


def completion_script(shell: str) -> str:
    """The script that `rankwise --show-completion` prints from that shell (typer's), for
    `shell` whichever shell runs this."""
    from typer._completion_shared import get_completion_script

    complete_var = f"_{PROG.upper()}_COMPLETE"
    return get_completion_script(prog_name=PROG, complete_var=complete_var, shell=shell)


def write_completions(outdir: Path) -> list[Path]:
    """bash: a file for bash-completion's completions/ folder (loaded on first `rankwise <TAB>`).
    zsh: `_rankwise` for a folder on $fpath; zsh autoloads it as the body of the function
    _rankwise, so that body also completes the call that loaded it, not only the next one."""
    outdir.mkdir(parents=True, exist_ok=True)
    bash = outdir / "rankwise.bash"
    bash.write_text(completion_script("bash"))
    zsh = outdir / "_rankwise"
    zsh.write_text(completion_script("zsh").rstrip() + '\n_rankwise_completion "$@"\n')
    return [bash, zsh]


def main(argv: list[str] | None = None) -> int:
    from rankwise import __version__

    parser = argparse.ArgumentParser(prog="python -m rankwise.cli.manpages", description=__doc__.splitlines()[0])
    parser.add_argument("--man", type=Path, help="write the man pages (section 1) into this folder")
    parser.add_argument("--completion", type=Path, help="write the bash and zsh completion scripts into this folder")
    args = parser.parse_args(argv)
    if not args.man and not args.completion:
        parser.error("nothing to write: give --man DIR and/or --completion DIR")
    try:
        files = (write_man_pages(args.man, __version__) if args.man else []) + \
                (write_completions(args.completion) if args.completion else [])
    except OSError as exc:
        print(f"rankwise: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {len(files)} files" + (f" ({len(files) - 2 * bool(args.completion)} man pages)" if args.man else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
