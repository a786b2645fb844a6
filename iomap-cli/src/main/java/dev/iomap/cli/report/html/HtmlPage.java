package dev.iomap.cli.report.html;

import java.util.List;

/**
 * A self-contained HTML page of headings, paragraphs, tables and inline SVG charts. Its one script, inline,
 * runs when the page has loaded and marks on {@code <body>} how many charts it holds
 * ({@code data-charts}) and how many of them drew every mark with a size ({@code data-drawn}): what a
 * browser test reads back.
 */
final class HtmlPage {
    private static final String STYLE = "body{font-family:sans-serif;margin:24px;max-width:820px}"
            + "table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #bbb;padding:3px 8px;"
            + "text-align:right}th{background:#eee}td:first-child,td:nth-child(2){text-align:left}"
            + "svg.chart{display:block;margin:16px 0;border:1px solid #eee}";
    private static final String CHECK = "window.addEventListener('load',function(){"
            + "var charts=document.querySelectorAll('svg.chart'),drawn=0;"
            + "charts.forEach(function(svg){var marks=svg.querySelectorAll('.mark'),ok=marks.length>0;"
            + "marks.forEach(function(m){var b=m.getBBox();if(!(b.width>0||b.height>0))ok=false;});"
            + "if(ok)drawn++;});"
            + "document.body.setAttribute('data-charts',charts.length);"
            + "document.body.setAttribute('data-drawn',drawn);});";
    private final StringBuilder body = new StringBuilder();
    private final String title;

    HtmlPage(String title) {
        this.title = title;
        heading1(title);
    }

    private void heading1(String text) {
        body.append("<h1>").append(SvgChart.esc(text)).append("</h1>\n");
    }

    void heading(String text) {
        body.append("<h2>").append(SvgChart.esc(text)).append("</h2>\n");
    }

    void paragraph(String text) {
        body.append("<p>").append(SvgChart.esc(text)).append("</p>\n");
    }

    void chart(String svg) {
        body.append(svg);
    }

    void table(List<String> header, List<List<String>> rows) {
        body.append("<table><tr>");
        header.forEach(h -> body.append("<th>").append(SvgChart.esc(h)).append("</th>"));
        body.append("</tr>\n");
        for (List<String> row : rows) {
            body.append("<tr>");
            row.forEach(cell -> body.append("<td>").append(SvgChart.esc(cell)).append("</td>"));
            body.append("</tr>\n");
        }
        body.append("</table>\n");
    }

    String html() {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + SvgChart.esc(title)
                + "</title><style>" + STYLE + "</style><script>" + CHECK + "</script></head>\n<body>\n" + body
                + "</body></html>\n";
    }
}
