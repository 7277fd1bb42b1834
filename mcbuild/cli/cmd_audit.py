"""``mcbuild audit build/<id>``: re-read a built artifact, re-run the static audits, print findings."""
from __future__ import annotations

import sys
from pathlib import Path

import click


def register(main: click.Group) -> None:
    @main.command("audit")
    @click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
    @click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON instead of lines.")
    def audit_cmd(folders: tuple[Path, ...], as_json: bool) -> None:
        """Audit built artifacts (build/<id>/); exit 1 on any hard failure."""
        from mcbuild.pipeline.build import audit_folder
        from mcbuild.compiler.core.canonical import dumps

        failed = False
        for folder in folders:
            findings = audit_folder(folder)
            failed |= bool(findings.hard_failures)
            if as_json:
                click.echo(dumps({"folder": str(folder), **findings.to_json()}), nl=False)
                continue
            data = findings.to_json()
            for f in data["hard_failures"]:
                click.echo(f"HARD {f['code']}: {f['file']}: {f['field']}: {f['message']}")
            for f in data["warnings"]:
                click.echo(f"WARN {f['code']}: {f['file']}: {f['field']}: {f['message']}")
            click.echo(f"{folder}: {len(data['hard_failures'])} hard failure(s), {len(data['warnings'])} warning(s)")
        if failed:
            sys.exit(1)
