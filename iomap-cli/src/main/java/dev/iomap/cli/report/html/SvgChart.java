package dev.iomap.cli.report.html;

import java.util.List;
import java.util.Locale;
import java.util.function.DoubleFunction;

/**
 * Line and bar charts as inline SVG. Every chart is an {@code <svg class="chart" data-chart=ID>} with
 * its title, axes with tick labels, and its marks ({@code class="mark"}): a polyline per series, a rect
 * per bar, each bar carrying its value in {@code data-value} and a label with the number above it, so a
 * reader (or a test) finds the run's numbers in the picture itself.
 */
public final class SvgChart {
    /** Series colours, in order (colour-blind safe: Okabe and Ito's palette). */
    static final String[] COLOURS = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442"};
    private static final int WIDTH = 760;
    private static final int HEIGHT = 330;
    private static final int LEFT = 78;
    private static final int RIGHT = 20;
    private static final int TOP = 44;
    private static final int BOTTOM = 62;

    private SvgChart() {
    }

    /**
     * A series of a line chart.
     *
     * @param name its legend
     * @param x the x values, ascending
     * @param y the y values, as many
     */
    public record Line(String name, double[] x, double[] y) {
    }

    /**
     * A series of a bar chart: one value per category.
     *
     * @param name its legend
     * @param values the values, one per category
     */
    public record Bars(String name, double[] values) {
    }

    /**
     * @param id the chart's {@code data-chart} name
     * @param title its title
     * @param xAxis the x axis's label
     * @param yAxis the y axis's label
     * @param lines the series
     * @return the chart
     */
    public static String line(String id, String title, String xAxis, String yAxis, List<Line> lines) {
        double maxX = 0;
        double maxY = 0;
        for (Line line : lines) {
            for (double x : line.x()) {
                maxX = Math.max(maxX, x);
            }
            for (double y : line.y()) {
                maxY = Math.max(maxY, y);
            }
        }
        double xTop = niceTop(maxX);
        double yTop = niceTop(maxY);
        StringBuilder svg = open(id, title);
        axes(svg, xTop, yTop, xAxis, yAxis, true);
        for (int s = 0; s < lines.size(); s++) {
            Line line = lines.get(s);
            StringBuilder points = new StringBuilder();
            for (int i = 0; i < line.x().length; i++) {
                points.append(fmt(px(line.x()[i], xTop))).append(',').append(fmt(py(line.y()[i], yTop))).append(' ');
            }
            svg.append("<polyline class=\"mark\" data-series=\"").append(esc(line.name())).append("\" data-points=\"")
                    .append(line.x().length).append("\" fill=\"none\" stroke-width=\"2\" stroke=\"")
                    .append(COLOURS[s % COLOURS.length]).append("\" points=\"").append(points.toString().strip())
                    .append("\"><title>").append(esc(line.name())).append("</title></polyline>\n");
        }
        legend(svg, lines.stream().map(Line::name).toList());
        return svg.append("</svg>\n").toString();
    }

    /**
     * @param id the chart's {@code data-chart} name
     * @param title its title
     * @param yAxis the y axis's label
     * @param categories the groups of bars along x
     * @param series the series, each with one value per category
     * @param label how a value is written above its bar
     * @return the chart
     */
    public static String bars(String id, String title, String yAxis, List<String> categories, List<Bars> series,
            DoubleFunction<String> label) {
        double max = 0;
        for (Bars bars : series) {
            for (double value : bars.values()) {
                max = Math.max(max, value);
            }
        }
        double yTop = niceTop(max);
        StringBuilder svg = open(id, title);
        axes(svg, categories.size(), yTop, "", yAxis, false);
        double slot = (WIDTH - LEFT - RIGHT) / (double) Math.max(1, categories.size());
        double barWidth = Math.min(60, slot * 0.8 / Math.max(1, series.size()));
        for (int c = 0; c < categories.size(); c++) {
            double groupLeft = LEFT + c * slot + (slot - barWidth * series.size()) / 2;
            for (int s = 0; s < series.size(); s++) {
                double value = series.get(s).values()[c];
                double x = groupLeft + s * barWidth;
                double y = py(value, yTop);
                svg.append("<rect class=\"mark\" data-series=\"").append(esc(series.get(s).name()))
                        .append("\" data-category=\"").append(esc(categories.get(c))).append("\" data-value=\"")
                        .append(esc(label.apply(value))).append("\" x=\"").append(fmt(x + 1)).append("\" y=\"")
                        .append(fmt(y)).append("\" width=\"").append(fmt(barWidth - 2)).append("\" height=\"")
                        .append(fmt(HEIGHT - BOTTOM - y)).append("\" fill=\"").append(COLOURS[s % COLOURS.length])
                        .append("\"><title>").append(esc(series.get(s).name() + " " + categories.get(c) + ": "
                                + label.apply(value))).append("</title></rect>\n");
                if (barWidth >= 18) { // narrower bars keep their number in data-value and the tooltip only
                    svg.append("<text class=\"value\" x=\"").append(fmt(x + barWidth / 2)).append("\" y=\"")
                            .append(fmt(y - 4)).append("\" text-anchor=\"middle\" font-size=\"10\">")
                            .append(esc(label.apply(value))).append("</text>\n");
                }
            }
            double labelX = LEFT + c * slot + slot / 2;
            int labelY = HEIGHT - BOTTOM + 16;
            svg.append("<text x=\"").append(fmt(labelX)).append("\" y=\"").append(labelY)
                    .append(slot < 70 ? "\" text-anchor=\"end\" transform=\"rotate(-35 " + fmt(labelX) + " " + labelY + ")"
                            : "\" text-anchor=\"middle").append("\" font-size=\"11\">")
                    .append(esc(categories.get(c))).append("</text>\n");
        }
        if (series.size() > 1) {
            legend(svg, series.stream().map(Bars::name).toList());
        }
        return svg.append("</svg>\n").toString();
    }

    private static StringBuilder open(String id, String title) {
        return new StringBuilder().append("<svg class=\"chart\" data-chart=\"").append(esc(id))
                .append("\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
                .append(HEIGHT).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
                .append("\" font-family=\"sans-serif\">\n<text x=\"").append(WIDTH / 2)
                .append("\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">").append(esc(title))
                .append("</text>\n");
    }

    /** The axes, the y ticks with their labels, and on a line chart the x ticks. */
    private static void axes(StringBuilder svg, double xTop, double yTop, String xAxis, String yAxis, boolean xTicks) {
        int bottom = HEIGHT - BOTTOM;
        svg.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(TOP).append("\" x2=\"").append(LEFT)
                .append("\" y2=\"").append(bottom).append("\" stroke=\"#333\"/>\n");
        svg.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(bottom).append("\" x2=\"")
                .append(WIDTH - RIGHT).append("\" y2=\"").append(bottom).append("\" stroke=\"#333\"/>\n");
        for (int i = 0; i <= 5; i++) {
            double value = yTop * i / 5;
            double y = py(value, yTop);
            svg.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(fmt(y)).append("\" x2=\"")
                    .append(WIDTH - RIGHT).append("\" y2=\"").append(fmt(y)).append("\" stroke=\"#ddd\"/>\n");
            svg.append("<text x=\"").append(LEFT - 6).append("\" y=\"").append(fmt(y + 4))
                    .append("\" text-anchor=\"end\" font-size=\"11\">").append(tick(value)).append("</text>\n");
        }
        if (xTicks) {
            for (int i = 0; i <= 5; i++) {
                double value = xTop * i / 5;
                svg.append("<text x=\"").append(fmt(px(value, xTop))).append("\" y=\"").append(bottom + 16)
                        .append("\" text-anchor=\"middle\" font-size=\"11\">").append(tick(value)).append("</text>\n");
            }
        }
        svg.append("<text x=\"").append((LEFT + WIDTH - RIGHT) / 2).append("\" y=\"").append(HEIGHT - 22)
                .append("\" text-anchor=\"middle\" font-size=\"12\">").append(esc(xAxis)).append("</text>\n");
        svg.append("<text transform=\"translate(16,").append((TOP + bottom) / 2).append(") rotate(-90)\"")
                .append(" text-anchor=\"middle\" font-size=\"12\">").append(esc(yAxis)).append("</text>\n");
    }

    private static void legend(StringBuilder svg, List<String> names) {
        double x = LEFT;
        for (int i = 0; i < names.size(); i++) {
            svg.append("<rect x=\"").append(fmt(x)).append("\" y=\"").append(HEIGHT - 14).append("\" width=\"12\"")
                    .append(" height=\"10\" fill=\"").append(COLOURS[i % COLOURS.length]).append("\"/>\n");
            svg.append("<text x=\"").append(fmt(x + 16)).append("\" y=\"").append(HEIGHT - 5)
                    .append("\" font-size=\"11\">").append(esc(names.get(i))).append("</text>\n");
            x += 24 + 7 * names.get(i).length();
        }
    }

    private static double px(double x, double xTop) {
        return LEFT + (WIDTH - LEFT - RIGHT) * (xTop == 0 ? 0 : x / xTop);
    }

    private static double py(double y, double yTop) {
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * (yTop == 0 ? 0 : y / yTop);
    }

    /** @return the least of 1, 2 or 5 times a power of ten, times 5, that is at least {@code max} */
    static double niceTop(double max) {
        if (max <= 0) {
            return 1;
        }
        double step = max / 5;
        double power = Math.pow(10, Math.floor(Math.log10(step)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * power >= step) {
                return m * power * 5;
            }
        }
        return 10 * power * 5;
    }

    private static String tick(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return String.format(Locale.ROOT, "%,d", (long) value);
        }
        return String.format(Locale.ROOT, "%.3g", value);
    }

    private static String fmt(double value) {
        return String.format(Locale.ROOT, "%.1f", value);
    }

    /** @return {@code text} with XML's special characters escaped */
    static String esc(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
