package dev.iomap.cli.bench;

import java.io.PrintWriter;
import java.time.Duration;

/**
 * The line fio keeps rewriting on a terminal while jobs run. Called from the runner's thread only.
 */
public interface Progress {

    /**
     * @param elapsed time since the group started
     * @param line the status, without line ending
     */
    void show(Duration elapsed, String line);

    /** The group finished: remove the line. */
    void clear();

    /** @return a progress that shows nothing */
    static Progress none() {
        return new Progress() {
            @Override
            public void show(Duration elapsed, String line) {
            }

            @Override
            public void clear() {
            }
        };
    }

    /**
     * @param err the terminal's stream
     * @param after how long a run must have lasted before the line appears
     * @return a progress that rewrites one line of {@code err} with carriage returns
     */
    static Progress terminal(PrintWriter err, Duration after) {
        return new Progress() {
            private int shownLength;

            @Override
            public void show(Duration elapsed, String line) {
                if (elapsed.compareTo(after) < 0) {
                    return;
                }
                String padding = " ".repeat(Math.max(0, shownLength - line.length()));
                err.print("\r" + line + padding);
                err.flush();
                shownLength = line.length();
            }

            @Override
            public void clear() {
                if (shownLength > 0) {
                    err.print("\r" + " ".repeat(shownLength) + "\r");
                    err.flush();
                    shownLength = 0;
                }
            }
        };
    }
}
