package dev.iomap.nio;

import java.nio.file.PathMatcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/** {@link java.nio.file.FileSystem#getPathMatcher} for '/'-separated paths: "glob:" and "regex:". */
final class Globs {
    private static final String REGEX_META = ".^$+{[]|()";
    private static final String GLOB_META = "\\*?[{";

    private Globs() {
    }

    /**
     * @param syntaxAndPattern {@code glob:PATTERN} or {@code regex:PATTERN}
     * @return a matcher of a path's string form
     * @throws IllegalArgumentException if there is no syntax prefix or the pattern is bad
     * @throws UnsupportedOperationException for another syntax
     */
    static PathMatcher matcher(String syntaxAndPattern) {
        int colon = syntaxAndPattern.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("expected syntax:pattern, got '" + syntaxAndPattern + "'");
        }
        String syntax = syntaxAndPattern.substring(0, colon);
        String pattern = syntaxAndPattern.substring(colon + 1);
        String regex = switch (syntax.toLowerCase(java.util.Locale.ROOT)) {
            case "glob" -> toRegex(pattern);
            case "regex" -> pattern;
            default -> throw new UnsupportedOperationException("path matcher syntax '" + syntax
                    + "' is not supported; use glob: or regex:");
        };
        Pattern compiled = Pattern.compile(regex);
        return path -> compiled.matcher(path.toString()).matches();
    }

    /** Translates a glob: {@code *} within a name, {@code **} across names, {@code ?}, {@code [..]}, {@code {a,b}}. */
    static String toRegex(String glob) {
        var regex = new StringBuilder("^");
        boolean inGroup = false;
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            switch (c) {
                case '\\' -> {
                    if (++i == glob.length()) {
                        throw new PatternSyntaxException("no character to escape", glob, i - 1);
                    }
                    char next = glob.charAt(i);
                    if (GLOB_META.indexOf(next) >= 0 || REGEX_META.indexOf(next) >= 0) {
                        regex.append('\\');
                    }
                    regex.append(next);
                }
                case '*' -> {
                    if (i + 1 < glob.length() && glob.charAt(i + 1) == '*') {
                        regex.append(".*");
                        i++;
                    } else {
                        regex.append("[^/]*");
                    }
                }
                case '?' -> regex.append("[^/]");
                case '[' -> i = bracket(glob, i, regex);
                case '{' -> {
                    if (inGroup) {
                        throw new PatternSyntaxException("nested groups are not supported", glob, i);
                    }
                    regex.append("(?:(?:");
                    inGroup = true;
                }
                case '}' -> {
                    regex.append(inGroup ? "))" : "\\}");
                    inGroup = false;
                }
                case ',' -> regex.append(inGroup ? ")|(?:" : ",");
                default -> {
                    if (REGEX_META.indexOf(c) >= 0) {
                        regex.append('\\');
                    }
                    regex.append(c);
                }
            }
        }
        if (inGroup) {
            throw new PatternSyntaxException("missing '}'", glob, glob.length() - 1);
        }
        return regex.append('$').toString();
    }

    /** Appends the class that starts at {@code start} (a '['); returns the index of its ']'. */
    private static int bracket(String glob, int start, StringBuilder regex) {
        regex.append("[[^/]&&[");
        int i = start + 1;
        if (i < glob.length() && (glob.charAt(i) == '!' || glob.charAt(i) == '^')) {
            regex.append('^');
            i++;
        }
        for (; i < glob.length(); i++) {
            char c = glob.charAt(i);
            if (c == ']') {
                regex.append("]]");
                return i;
            }
            if (c == '/') {
                throw new PatternSyntaxException("'/' is not allowed in a bracket expression", glob, i);
            }
            if (c == '[' || c == '&' || c == '\\') {
                regex.append('\\');
            }
            regex.append(c);
        }
        throw new PatternSyntaxException("missing ']'", glob, start);
    }
}
