package dev.iomap.testkit.fsx;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reading and writing op logs: one {@link Op} per line, {@code #} starts a comment (the header of a
 * log says which adapter, geometry and seed it came from), blank lines are ignored.
 */
public final class OpLog {

    private OpLog() {
    }

    /**
     * @param text a whole log
     * @return its ops in order
     * @throws IllegalArgumentException naming the line number of a bad line
     */
    public static List<Op> parse(String text) {
        List<Op> ops = new ArrayList<>();
        String[] lines = text.split("\\R");
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            int hash = line.indexOf('#');
            if (hash >= 0) {
                line = line.substring(0, hash);
            }
            if (line.isBlank()) {
                continue;
            }
            try {
                ops.add(Op.parse(line));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("op log line " + (i + 1) + ": " + e.getMessage(), e);
            }
        }
        return ops;
    }

    /**
     * @param file a log file
     * @return its ops
     * @throws IOException if it cannot be read
     */
    public static List<Op> read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8));
    }

    /**
     * Reads a log from the class path (e.g. a regression test's resource).
     *
     * @param anchor a class whose loader finds the resource
     * @param resource the resource name, absolute ({@code /fsx/bug-1.fsxlog})
     * @return its ops
     */
    public static List<Op> resource(Class<?> anchor, String resource) {
        try (var in = anchor.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("no op log resource " + resource);
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param header comment lines (without {@code #})
     * @param ops the ops
     * @return the log text
     */
    public static String format(List<String> header, List<Op> ops) {
        StringBuilder out = new StringBuilder();
        for (String line : header) {
            out.append("# ").append(line).append('\n');
        }
        for (Op op : ops) {
            out.append(op.toLine()).append('\n');
        }
        return out.toString();
    }

    /**
     * Writes a log, creating the directory.
     *
     * @param file where
     * @param header comment lines
     * @param ops the ops
     * @throws IOException if it cannot be written
     */
    public static void write(Path file, List<String> header, List<Op> ops) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, format(header, ops), StandardCharsets.UTF_8);
    }
}
