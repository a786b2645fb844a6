package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The named steps of one {@link RealToolsTest} run: each runs a bash script with a timeout (then kills
 * it and everything it started), or checks one comparison, and is recorded as passed or failed with
 * what went wrong (the tool, its exit status, its standard error). A failed step does not stop the
 * run, so one run tells every tool that works and every one that does not; {@link #assertAllPassed()}
 * then fails with all of them. The summary goes to standard output too (Surefire keeps it).
 */
final class RealToolsSteps {
    /** How long one tool run may take before it is killed and its step fails. */
    static final Duration STEP_TIMEOUT = Duration.ofSeconds(60);

    /**
     * What a script did.
     *
     * @param exit its exit status
     * @param stdout its standard output, decoded leniently as UTF-8
     * @param stderr its standard error, decoded leniently as UTF-8
     */
    record Result(int exit, String stdout, String stderr) {
    }

    private final String run;
    private final Path scratch;
    private final Map<String, String> environment;
    private final List<String> passed = new ArrayList<>();
    private final List<String> failed = new ArrayList<>();
    private final List<String> notRun = new ArrayList<>();

    /**
     * @param run what this run is, for the summary
     * @param scratch a directory for the scripts' output files and {@code HOME}
     * @param environment more environment variables for every script (after {@code LC_ALL=C}, {@code TZ=UTC}
     *     and a {@code HOME} in the scratch directory, which keep tools from reading or writing the user's
     *     configuration)
     */
    RealToolsSteps(String run, Path scratch, Map<String, String> environment) {
        this.run = run;
        this.scratch = scratch;
        this.environment = Map.copyOf(environment);
    }

    /** @return the path of a script in the test resources' {@code realtools/} directory */
    static Path script(String name) {
        try {
            return Path.of(RealToolsSteps.class.getResource("/realtools/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("test resource realtools/" + name, e);
        }
    }

    /**
     * Runs {@code bash -euo pipefail -c script} in {@code dir} and records the step as passed when it
     * exits 0 and, if {@code quiet}, prints nothing on standard output.
     *
     * @param step the step's name, e.g. {@code "cp -a host→mount"}
     * @param dir the working directory
     * @param quiet whether any standard output fails the step (for {@code diff})
     * @param script the script
     * @return what it did, or null if it timed out (the step failed then)
     */
    Result run(String step, Path dir, boolean quiet, String script) throws IOException, InterruptedException {
        Result result = execute(dir, script, STEP_TIMEOUT);
        if (result == null) {
            fail(step, "timed out after " + STEP_TIMEOUT.toSeconds() + " s (killed): " + script);
            return null;
        }
        if (result.exit() != 0 || (quiet && !result.stdout().isEmpty())) {
            fail(step, "exit " + result.exit() + ": " + script + "\n    stderr: " + clip(result.stderr())
                    + (result.stdout().isEmpty() ? "" : "\n    stdout: " + clip(result.stdout())));
        } else {
            passed.add(step);
        }
        return result;
    }

    /** {@link #run} with standard output allowed. */
    Result run(String step, Path dir, String script) throws IOException, InterruptedException {
        return run(step, dir, false, script);
    }

    /**
     * Runs a script whose output is compared later (a listing of a copy), as a step.
     *
     * @return its standard output, or null if it failed (recorded) or timed out
     */
    String capture(String step, Path dir, String script) throws IOException, InterruptedException {
        Result result = run(step, dir, script);
        return result == null || result.exit() != 0 ? null : result.stdout();
    }

    /** Records a step that was not run because an earlier one failed. */
    void notRun(String step, String because) {
        notRun.add(step + " (" + because + ")");
    }

    /**
     * Runs a script that must work for the run to go on (building the source tree, listing a copy):
     * asserts it exits 0 in time.
     *
     * @return its standard output
     */
    String must(String what, Path dir, String script) throws IOException, InterruptedException {
        Result result = execute(dir, script, STEP_TIMEOUT);
        assertThat(result).as("%s timed out: %s", what, script).isNotNull();
        assertThat(result.exit()).as("%s failed (%s)%n  stderr: %s", what, script, result.stderr()).isZero();
        return result.stdout();
    }

    /**
     * Records a comparison of two multi-line texts (listings) as one step: passed when equal, else
     * failed with both texts where they are short (20 lines at most), else with the lines only one side
     * has; not run when either is null (its listing failed).
     */
    void same(String step, String expectedName, String expected, String actualName, String actual) {
        if (expected == null || actual == null) {
            notRun(step, "a listing failed");
            return;
        }
        if (expected.equals(actual)) {
            passed.add(step);
            return;
        }
        if (expected.lines().count() <= 20 && actual.lines().count() <= 20) {
            fail(step, "differs\n    " + expectedName + ":\n      " + String.join("\n      ", expected.lines().toList())
                    + "\n    " + actualName + ":\n      " + String.join("\n      ", actual.lines().toList()));
            return;
        }
        Set<String> left = new LinkedHashSet<>(expected.lines().toList());
        Set<String> right = new LinkedHashSet<>(actual.lines().toList());
        Set<String> onlyLeft = new LinkedHashSet<>(left);
        onlyLeft.removeAll(right);
        Set<String> onlyRight = new LinkedHashSet<>(right);
        onlyRight.removeAll(left);
        fail(step, "differs\n    only in " + expectedName + ":\n      " + String.join("\n      ", onlyLeft)
                + "\n    only in " + actualName + ":\n      " + String.join("\n      ", onlyRight));
    }

    /** Records a step that is a plain condition. */
    void check(String step, boolean ok, String otherwise) {
        if (ok) {
            passed.add(step);
        } else {
            fail(step, otherwise);
        }
    }

    private void fail(String step, String why) {
        failed.add(step + ": " + why);
    }

    /** @return the names of the steps that failed so far */
    List<String> failures() {
        return List.copyOf(failed);
    }

    /** Prints the summary and fails with every failed step, if any. */
    void assertAllPassed() {
        String summary = "real tools, " + run + ": " + passed.size() + " steps passed, " + failed.size() + " failed"
                + (notRun.isEmpty() ? "" : ", " + notRun.size() + " not run")
                + "\n  passed: " + String.join(" | ", passed)
                + (notRun.isEmpty() ? "" : "\n  not run: " + String.join(" | ", notRun))
                + (failed.isEmpty() ? "" : "\n  FAILED:\n  - " + String.join("\n  - ", failed));
        System.out.println(summary);
        assertThat(failed).as(summary).isEmpty();
    }

    /** The first 25 lines (of at most 300 characters) of a tool's output, and how many more there were. */
    private static String clip(String text) {
        List<String> lines = text.strip().lines().toList();
        List<String> shown = lines.stream().limit(25)
                .map(line -> line.length() <= 300 ? line : line.substring(0, 300) + " [...]").toList();
        return String.join("\n      ", shown)
                + (lines.size() > shown.size() ? "\n      [... " + (lines.size() - shown.size()) + " more lines]" : "");
    }

    /** Runs the script; null on timeout, after killing it and its descendants. */
    private Result execute(Path dir, String script, Duration timeout) throws IOException, InterruptedException {
        Path out = Files.createTempFile(scratch, "step", ".out");
        Path err = Files.createTempFile(scratch, "step", ".err");
        try {
            ProcessBuilder builder = new ProcessBuilder("bash", "-euo", "pipefail", "-c", script)
                    .directory(dir.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
            builder.environment().put("LC_ALL", "C");
            builder.environment().put("TZ", "UTC");
            builder.environment().put("HOME", scratch.toString());
            builder.environment().putAll(environment);
            Process process = builder.start();
            try {
                if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
                    return null;
                }
            } finally {
                if (process.isAlive()) {
                    process.descendants().forEach(ProcessHandle::destroyForcibly);
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            }
            return new Result(process.exitValue(), new String(Files.readAllBytes(out), StandardCharsets.UTF_8),
                    new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
