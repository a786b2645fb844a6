package dev.iomap.cli.jobfile;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads fio job files: ini-style {@code [sections]}, {@code key=value} or bare {@code key} lines,
 * whole-line comments starting with {@code ;} or {@code #}, the rest of a line after {@code ;} or
 * {@code #} dropped (as fio does), {@code include FILE} (relative to the including file; included
 * files hold options only and may include further), and {@code ${VAR}} expanded from the
 * environment (an unset variable expands to nothing, as in fio).
 *
 * <p>Option names are checked here; values are checked by {@link JobResolver}. Immutable and
 * thread-safe.
 */
public final class JobFileParser {
    /** The largest job file read: fio's are a few KiB. */
    private static final long MAX_FILE_BYTES = 1L << 20;
    private static final int MAX_INCLUDE_DEPTH = 16;
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([^}]*)}");

    private final Map<String, String> environment;

    /**
     * @param environment the variables {@code ${VAR}} expands from (usually {@link System#getenv()})
     */
    public JobFileParser(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    /**
     * @param path the job file
     * @return its sections
     * @throws JobFileException on a syntax error, an unknown option, or a missing include
     * @throws IOException if the file cannot be read
     */
    public JobFile parse(Path path) throws JobFileException, IOException {
        List<Section> sections = new ArrayList<>();
        SectionBuilder[] current = {null};
        readLines(path, new ArrayDeque<>(), (location, text) -> {
            if (text.startsWith("[")) {
                current[0] = startSection(location, text, sections, current[0]);
                return;
            }
            if (current[0] == null) {
                throw new JobFileException("option '" + text + "' at " + location
                        + " is outside of any section: put it under [global] or a [job] header");
            }
            current[0].settings.add(setting(location, text));
        });
        if (current[0] != null) {
            sections.add(current[0].build());
        }
        return new JobFile(path, sections);
    }

    private static SectionBuilder startSection(Location location, String text, List<Section> sections,
            SectionBuilder previous) throws JobFileException {
        if (!text.endsWith("]") || text.length() < 3) {
            throw new JobFileException("bad section header '" + text + "' at " + location
                    + ": write [name]");
        }
        if (previous != null) {
            sections.add(previous.build());
        }
        return new SectionBuilder(text.substring(1, text.length() - 1).strip(), location);
    }

    private OptionSetting setting(Location location, String text) throws JobFileException {
        int equals = text.indexOf('=');
        String key = (equals < 0 ? text : text.substring(0, equals)).strip();
        String value = equals < 0 ? "1" : expand(text.substring(equals + 1).strip());
        FioOption option = FioOption.byKey(key).orElseThrow(() -> FioOption.isFioOption(key)
                ? new JobFileException("option '" + key + "' at " + location
                        + " is a fio option that iomap bench does not support")
                : new JobFileException("unknown option '" + key + "' at " + location));
        return new OptionSetting(option, key, value, location);
    }

    private String expand(String value) {
        Matcher matcher = VARIABLE.matcher(value);
        return matcher.replaceAll(match ->
                Matcher.quoteReplacement(environment.getOrDefault(match.group(1), "")));
    }

    /** What to do with one meaningful line: comments and blank lines never get here. */
    @FunctionalInterface
    private interface LineHandler {
        void line(Location location, String text) throws JobFileException;
    }

    private void readLines(Path path, Deque<Path> including, LineHandler handler)
            throws JobFileException, IOException {
        String what = including.isEmpty() ? "job file " + path : "included file " + path;
        List<String> lines;
        try {
            if (Files.exists(path) && !Files.isRegularFile(path)) {
                throw new JobFileException(what + " is not a regular file");
            }
            if (Files.size(path) > MAX_FILE_BYTES) {
                throw new JobFileException(what + " is over " + (MAX_FILE_BYTES >> 20) + " MiB: not a job file");
            }
            lines = Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new JobFileException(what + " does not exist", e);
        } catch (CharacterCodingException e) {
            throw new JobFileException(what + " is not text (not UTF-8): not a job file", e);
        }
        for (int i = 0; i < lines.size(); i++) {
            Location location = new Location(path, i + 1);
            String text = withoutComment(lines.get(i));
            if (text.isEmpty()) {
                continue;
            }
            if (isInclude(text)) {
                include(location, text.substring("include".length()).strip(), path, including, handler);
            } else if (text.startsWith("[") && !including.isEmpty()) {
                throw new JobFileException("included file " + path + " has a section header at "
                        + location + ": included files may hold options only");
            } else {
                handler.line(location, text);
            }
        }
    }

    private void include(Location location, String name, Path from, Deque<Path> including,
            LineHandler handler) throws JobFileException, IOException {
        if (name.isEmpty()) {
            throw new JobFileException("include at " + location + " names no file");
        }
        Path parent = from.getParent();
        Path target = parent == null ? Path.of(name) : parent.resolve(name);
        Path normalized = target.toAbsolutePath().normalize();
        for (Path open : including) {
            if (open.equals(normalized)) {
                throw new JobFileException("include of " + target + " at " + location + " is circular");
            }
        }
        if (including.size() >= MAX_INCLUDE_DEPTH) {
            throw new JobFileException("includes nest deeper than " + MAX_INCLUDE_DEPTH + " at " + location);
        }
        including.push(normalized);
        readLines(target, including, handler);
        including.pop();
    }

    private static boolean isInclude(String text) {
        return text.startsWith("include") && text.length() > "include".length()
                && Character.isWhitespace(text.charAt("include".length()));
    }

    /** fio drops everything from the first ';' or '#' of a line. */
    private static String withoutComment(String line) {
        int cut = line.length();
        int semicolon = line.indexOf(';');
        int hash = line.indexOf('#');
        if (semicolon >= 0) {
            cut = semicolon;
        }
        if (hash >= 0 && hash < cut) {
            cut = hash;
        }
        return line.substring(0, cut).strip();
    }

    private static final class SectionBuilder {
        final String name;
        final Location location;
        final List<OptionSetting> settings = new ArrayList<>();

        SectionBuilder(String name, Location location) {
            this.name = Objects.requireNonNull(name);
            this.location = location;
        }

        Section build() {
            return new Section(name, location, settings);
        }
    }
}
