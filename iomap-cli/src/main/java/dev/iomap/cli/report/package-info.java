/**
 * fio's output formats: the normal text ({@link dev.iomap.cli.report.TextReport}), the JSON
 * structure ({@link dev.iomap.cli.report.JsonReport}), and the side-by-side table of
 * {@code --compare} ({@link dev.iomap.cli.report.CompareReport}).
 */
package dev.iomap.cli.report;
