package dev.iomap.core.trace;

import java.util.Set;

/** How the events spell flag sets: the kernel's {@code __print_flags(..., "|", ...)}. */
final class TraceNames {
    private TraceNames() {
    }

    /** @return the names of {@code flags} joined by {@code |}, in declaration order; empty for none */
    static String flags(Set<? extends Enum<?>> flags) {
        if (flags.isEmpty()) {
            return "";
        }
        StringBuilder joined = new StringBuilder();
        flags.stream().sorted((a, b) -> Integer.compare(a.ordinal(), b.ordinal())).forEach(flag -> {
            if (!joined.isEmpty()) {
                joined.append('|');
            }
            joined.append(flag.name());
        });
        return joined.toString();
    }
}
