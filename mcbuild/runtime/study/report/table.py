"""One report table and its renderings: Markdown, CSV, LaTeX (booktabs) and HTML."""
from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$", "{": r"\{",
          "}": r"\}", "<": r"$<$", ">": r"$>$", "±": r"$\pm$", "Δ": r"$\Delta$", "–": "--", "−": "$-$", "≥": r"$\geq$",
          "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(s: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in str(s))


@dataclass
class Table:
    """One titled table of text cells, rendered as Markdown, CSV, LaTeX (booktabs) or HTML."""

    key: str
    title: str
    caption: str
    columns: list[str]
    rows: list[list[str]]
    omitted: str = ""       # why the table does not apply to this study (then it has no rows)

    def markdown(self) -> str:
        if self.omitted:
            return f"### {self.title}\n\nNot shown: {self.omitted}\n"
        out = [f"### {self.title}", "", self.caption, ""]
        out.append("| " + " | ".join(self.columns) + " |")
        out.append("| " + " | ".join("---" for _ in self.columns) + " |")
        for r in self.rows:
            out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
        return "\n".join(out) + "\n"

    def csv_text(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        w.writerows(self.rows)
        return buf.getvalue()

    def latex(self) -> str:
        spec = "l" + "r" * (len(self.columns) - 1)
        lines = [r"% requires \usepackage{booktabs}", r"\begin{table}[t]", r"\centering",
                 rf"\caption{{{_tex(self.title)}. {_tex(self.caption)}}}",
                 rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(_tex(c) for c in self.columns) + r" \\",
                 r"\midrule"]
        lines += [" & ".join(_tex(c) for c in r) + r" \\" for r in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        if self.omitted:
            return f'<h3 id="{self.key}">{html.escape(self.title)}</h3><p class=omit>Not shown: {html.escape(self.omitted)}</p>'
        h = [f'<h3 id="{self.key}">{html.escape(self.title)}</h3>', f"<p class=cap>{html.escape(self.caption)}</p>",
             "<table><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in self.columns) + "</tr></thead><tbody>"]
        for r in self.rows:
            h.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
        h.append("</tbody></table>")
        return "\n".join(h)
