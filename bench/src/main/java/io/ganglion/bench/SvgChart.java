package io.ganglion.bench;

import java.util.List;
import java.util.Locale;

/**
 * A small SVG writer for {@code bench failover}: one panel per scenario, a polyline per queue of confirms per second
 * over time, with axes, a legend and vertical markers (the kill, the restart). No dependency: the document is built as
 * a string, every text escaped.
 */
final class SvgChart {
    private static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
    private static final int WIDTH = 900;
    private static final int PANEL_HEIGHT = 260;
    private static final int LEFT = 70;
    private static final int RIGHT = 150;
    private static final int TOP = 40;
    private static final int BOTTOM = 45;

    private SvgChart() {}

    /** One line: y values at x = fromSeconds + i * stepSeconds. */
    record Series(String label, double[] values) {}

    /** A vertical line at x seconds. */
    record Marker(String label, double atSeconds) {}

    record Panel(String title, double fromSeconds, double stepSeconds, List<Series> series, List<Marker> markers) {}

    static String render(String title, String yLabel, List<Panel> panels) {
        StringBuilder svg = new StringBuilder();
        int height = panels.size() * PANEL_HEIGHT + 30;
        svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                        + " font-family=\"sans-serif\" font-size=\"11\">\n",
                WIDTH,
                height,
                WIDTH,
                height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        text(svg, WIDTH / 2.0, 18, "middle", 14, title);
        for (int p = 0; p < panels.size(); p++) {
            panel(svg, panels.get(p), yLabel, 30 + p * PANEL_HEIGHT);
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static void panel(StringBuilder svg, Panel panel, String yLabel, int offsetY) {
        double x0 = LEFT;
        double x1 = WIDTH - RIGHT;
        double y0 = offsetY + TOP;
        double y1 = offsetY + PANEL_HEIGHT - BOTTOM;
        int points = 0;
        double max = 1;
        for (Series series : panel.series()) {
            points = Math.max(points, series.values().length);
            for (double v : series.values()) {
                max = Math.max(max, v);
            }
        }
        double yMax = niceCeiling(max * 1.1);
        double fromX = panel.fromSeconds();
        double toX = panel.fromSeconds() + Math.max(1, points - 1) * panel.stepSeconds();
        text(svg, (x0 + x1) / 2, offsetY + TOP - 12, "middle", 12, panel.title());
        svg.append(String.format(
                Locale.ROOT,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n",
                x0,
                y0,
                x1 - x0,
                y1 - y0));
        for (int i = 0; i <= 4; i++) {
            double value = yMax * i / 4;
            double y = y1 - (y1 - y0) * i / 4;
            line(svg, x0 - 4, y, x1, y, i == 0 ? "#999" : "#eee", null);
            text(svg, x0 - 6, y + 4, "end", 10, String.format(Locale.ROOT, "%.0f", value));
        }
        double tickStep = niceStep((toX - fromX) / 10);
        for (double t = Math.ceil(fromX / tickStep) * tickStep; t <= toX + 1e-9; t += tickStep) {
            double x = x0 + (x1 - x0) * (t - fromX) / (toX - fromX);
            line(svg, x, y1, x, y1 + 4, "#999", null);
            text(svg, x, y1 + 16, "middle", 10, String.format(Locale.ROOT, "%.0f", t));
        }
        text(svg, (x0 + x1) / 2, y1 + 32, "middle", 11, "seconds from the kill");
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\">%s</text>\n",
                x0 - 45,
                (y0 + y1) / 2,
                x0 - 45,
                (y0 + y1) / 2,
                escape(yLabel)));
        for (Marker marker : panel.markers()) {
            if (marker.atSeconds() < fromX || marker.atSeconds() > toX) {
                continue;
            }
            double x = x0 + (x1 - x0) * (marker.atSeconds() - fromX) / (toX - fromX);
            line(svg, x, y0, x, y1, "#444", "4,3");
            text(svg, x + 3, y0 + 12, "start", 10, marker.label());
        }
        for (int s = 0; s < panel.series().size(); s++) {
            Series series = panel.series().get(s);
            String colour = COLOURS[s % COLOURS.length];
            StringBuilder pointList = new StringBuilder();
            for (int i = 0; i < series.values().length; i++) {
                double t = fromX + i * panel.stepSeconds();
                double x = x0 + (x1 - x0) * (t - fromX) / (toX - fromX);
                double y = y1 - (y1 - y0) * Math.min(series.values()[i], yMax) / yMax;
                pointList.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            }
            svg.append("<polyline fill=\"none\" stroke=\"")
                    .append(colour)
                    .append("\" stroke-width=\"1.2\" points=\"")
                    .append(pointList.toString().trim())
                    .append("\"/>\n");
            double ly = y0 + 14 + s * 16;
            line(svg, x1 + 10, ly - 4, x1 + 30, ly - 4, colour, null);
            text(svg, x1 + 34, ly, "start", 10, series.label());
        }
    }

    private static void line(
            StringBuilder svg, double xa, double ya, double xb, double yb, String colour, String dash) {
        svg.append(String.format(
                Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"%s/>\n",
                xa,
                ya,
                xb,
                yb,
                colour,
                dash == null ? "" : " stroke-dasharray=\"" + dash + "\""));
    }

    private static void text(StringBuilder svg, double x, double y, String anchor, int size, String value) {
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">%s</text>\n",
                x,
                y,
                anchor,
                size,
                escape(value)));
    }

    static String escape(String value) {
        StringBuilder out = new StringBuilder(value.length());
        for (char c : value.toCharArray()) {
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&apos;");
                default -> {
                    if (c >= 0x20 || c == '\t' || c == '\n') {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }

    private static double niceCeiling(double value) {
        double step = niceStep(value / 4);
        return Math.max(step, Math.ceil(value / step) * step);
    }

    private static double niceStep(double raw) {
        if (raw <= 0) {
            return 1;
        }
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        double fraction = raw / magnitude;
        double nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
        return nice * magnitude;
    }
}
