package dev.iomap.cli.report;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;

/**
 * A small streaming JSON writer in fio's layout: two-space indentation, {@code "key" : value},
 * doubles with six decimals ({@code %f}). Not thread-safe. Misuse (a value where a name is needed)
 * is the caller's bug and gets {@link IllegalStateException}.
 */
final class JsonWriter {
    private final StringBuilder out = new StringBuilder();
    /** One entry per open object or array: whether it has no member yet. */
    private final Deque<Boolean> empty = new ArrayDeque<>();

    /** @return the document written so far */
    String text() {
        return out.toString();
    }

    JsonWriter beginObject() {
        separator();
        return open('{');
    }

    JsonWriter beginObject(String name) {
        name(name);
        return open('{');
    }

    JsonWriter endObject() {
        return close('}');
    }

    JsonWriter beginArray(String name) {
        name(name);
        return open('[');
    }

    JsonWriter endArray() {
        return close(']');
    }

    JsonWriter field(String name, long value) {
        name(name);
        out.append(value);
        return this;
    }

    JsonWriter field(String name, double value) {
        name(name);
        out.append(String.format(Locale.ROOT, "%f", Double.isFinite(value) ? value : 0.0));
        return this;
    }

    JsonWriter field(String name, boolean value) {
        name(name);
        out.append(value);
        return this;
    }

    JsonWriter field(String name, String value) {
        name(name);
        string(value);
        return this;
    }

    private JsonWriter open(char bracket) {
        out.append(bracket);
        empty.push(true);
        return this;
    }

    private JsonWriter close(char bracket) {
        if (empty.isEmpty()) {
            throw new IllegalStateException("nothing to close with " + bracket);
        }
        boolean wasEmpty = empty.pop();
        if (!wasEmpty) {
            newline();
        }
        out.append(bracket);
        return this;
    }

    private void name(String name) {
        if (empty.isEmpty()) {
            throw new IllegalStateException("a named member needs an open object");
        }
        separator();
        string(name);
        out.append(" : ");
    }

    private void separator() {
        if (empty.isEmpty()) {
            return;
        }
        if (!empty.pop()) {
            out.append(',');
        }
        empty.push(false);
        newline();
    }

    private void newline() {
        out.append('\n').append("  ".repeat(empty.size()));
    }

    private void string(String value) {
        out.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
