package dev.iomap.cli;

/** Whether standard error is a terminal, for the progress line. */
final class Terminal {
    /** Set by {@code bin/iomap} from the shell's {@code [ -t 2 ]}, which Java cannot ask itself. */
    static final String PROPERTY = "iomap.stderr.terminal";

    private Terminal() {
    }

    /**
     * @return the launcher's answer if it gave one; otherwise whether the JVM has an interactive
     *     console (standard input and output on a terminal), the closest Java can tell
     */
    @SuppressWarnings("SystemConsoleNull") // isTerminal() answers; the API still allows null
    static boolean stderrIsTerminal() {
        String told = System.getProperty(PROPERTY);
        if (told != null) {
            return Boolean.parseBoolean(told);
        }
        var console = System.console();
        return console != null && console.isTerminal();
    }
}
