"""A line chart as SVG text, for the experiment scripts' plots (one shared drawing
instead of one per script; the older scripts still draw their own)."""


def line_chart(series, xlabel, ylabel, xmax=None, ymax=None, xticks=None, width=560, height=320):
    """series: [(label, color, [(x, y), ...])], each drawn as a line with dots and its
    label at its last point; y values above ymax are drawn at ymax."""
    left, bottom = 70, 40
    xmax = xmax or max(x for _, _, pts in series for x, _ in pts) * 1.05
    ymax = ymax or max(y for _, _, pts in series for _, y in pts) * 1.1
    def px(v): return left + (width - left - 20) * v / xmax
    def py(v): return height - bottom - (height - bottom - 20) * min(v, ymax) / ymax
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           'font-size="11">',
           f'<line x1="{left}" y1="{height - bottom}" x2="{width - 20}" y2="{height - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="20" x2="{left}" y2="{height - bottom}" stroke="black"/>',
           f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle">{xlabel}</text>',
           f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" text-anchor="middle">{ylabel}</text>']
    for v in xticks or [xmax * i / 4 for i in range(5)]:
        out.append(f'<text x="{px(v):.1f}" y="{height - bottom + 14}" text-anchor="middle">{v:g}</text>')
    for i in range(5):
        v = ymax * i / 4
        out.append(f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.3g}</text>')
    for label, color, pts in series:
        pts = sorted(pts)
        out.append('<polyline points="' + " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts) +
                   f'" fill="none" stroke="{color}" stroke-width="2"/>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}"/>' for x, y in pts]
        x, y = pts[-1]
        out.append(f'<text x="{px(x) - 6:.1f}" y="{py(y) - 8:.1f}" text-anchor="end" fill="{color}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
