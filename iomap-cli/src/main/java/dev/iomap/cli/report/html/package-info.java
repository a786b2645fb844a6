/**
 * Reports as one self-contained HTML file with charts drawn as inline SVG by this package (no chart
 * library, no script from elsewhere, nothing fetched when the file is opened): {@code iomap bench --report}
 * and {@code bench/vs-kernel.sh --report}.
 */
package dev.iomap.cli.report.html;
