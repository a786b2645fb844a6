package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.cli.report.html.VsKernelHtmlReport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTML reports in a real browser (issue 41 item 4): headless Chromium (Debian's {@code chromium}) opens
 * the file with the network off, the page's own script counts the charts whose every mark has a size, and
 * the marks carry the run's numbers (compared with the run's JSON report).
 */
class HtmlReportChromiumTest {
    @TempDir
    Path dir;

    @Test
    void theBenchReportDrawsEveryChartWithTheRunsNumbers() throws Exception {
        Path job = dir.resolve("two-groups.fio");
        Files.writeString(job, """
                [global]
                ioengine=psync
                size=8m
                time_based=1
                runtime=1

                [randwrite-sync]
                rw=randwrite
                bs=4k
                fdatasync=8

                [randread]
                stonewall
                rw=randread
                bs=4k
                """);
        Path report = dir.resolve("report.html");
        Path json = dir.resolve("report.json");

        Cli cli = Cli.run("bench", "--progress=never", "--output-format", "json", "--output", json.toString(),
                "--report", report.toString(), job.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        String dom = chromiumDom(report);
        assertThat(attribute(dom, "body", "data-charts")).isEqualTo("8");   // 3 per group, 2 for the run
        assertThat(attribute(dom, "body", "data-drawn")).isEqualTo("8");
        List<Object> jobs = jobs(Files.readString(json));
        Map<String, Object> writer = job(jobs, "randwrite-sync");
        double wa = ((Number) MiniJson.object(writer, "iomap").get("write_amplification")).doubleValue();
        assertThat(dom).contains("data-chart=\"write-amplification\"")
                .contains("data-category=\"randwrite-sync\" data-value=\"" + String.format(Locale.ROOT, "%.3f", wa) + "\"");
        double p50 = ((Number) MiniJson.object(MiniJson.object(MiniJson.object(writer, "write"), "clat_ns"),
                "percentile").get("50.000000")).doubleValue();
        assertThat(dom).contains("data-series=\"write\" data-category=\"p50\" data-value=\""
                + String.format(Locale.ROOT, "%.1f", p50 / 1e3) + "\"");
        Matcher points = Pattern.compile("data-series=\"write\" data-points=\"(\\d+)\"").matcher(dom);
        assertThat(points.find()).isTrue();
        assertThat(Integer.parseInt(points.group(1))).as("bandwidth samples over a 1 s run").isGreaterThanOrEqualTo(3);
        assertThat(dom).contains("data-chart=\"latency-histogram\"", "data-chart=\"folio-orders\"",
                "data-category=\"order 0\"");
        screenshot(report, dir.resolve("report.png"));
        assertThat(Files.size(dir.resolve("report.png"))).isGreaterThan(10_000);
    }

    @Test
    void theVsKernelReportDrawsTheRatiosAsBars() throws Exception {
        List<VsKernelHtmlReport.Run> runs = new ArrayList<>();
        for (String line : List.of(
                "seq-write\t1\tkernel\t400.0\t3200\t10.0\t40.0\t-",
                "seq-write\t1\tours\t300.0\t2400\t12.0\t60.0\t1.010",
                "seq-write\t1\tfuse\t100.0\t800\t30.0\t90.0\t-",
                "rand-read\t1\tkernel\t200.0\t51200\t5.0\t9.0\t-",
                "rand-read\t1\tours\t250.0\t64000\t4.0\t8.0\t-")) {
            runs.add(VsKernelHtmlReport.Run.parse(line));
        }
        Path report = dir.resolve("vs-kernel.html");
        Files.writeString(report, VsKernelHtmlReport.of(runs, "# vs-kernel on a test machine"), StandardCharsets.UTF_8);

        String dom = chromiumDom(report);

        assertThat(attribute(dom, "body", "data-charts")).isEqualTo("4");
        assertThat(attribute(dom, "body", "data-drawn")).isEqualTo("4");
        assertThat(dom).contains("data-series=\"ours / kernel\" data-category=\"seq-write\" data-value=\"0.75\"",
                "data-series=\"fuse / kernel\" data-category=\"seq-write\" data-value=\"0.25\"",
                "data-series=\"ours / kernel\" data-category=\"rand-read\" data-value=\"1.25\"");
    }

    @SuppressWarnings("unchecked")
    private static List<Object> jobs(String json) {
        return (List<Object>) ((Map<String, Object>) MiniJson.parse(json)).get("jobs");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> job(List<Object> jobs, String name) {
        return jobs.stream().map(j -> (Map<String, Object>) j).filter(j -> name.equals(j.get("jobname")))
                .findFirst().orElseThrow(() -> new AssertionError("no job " + name + " in the JSON report"));
    }

    private static String attribute(String dom, String element, String name) {
        Matcher tag = Pattern.compile("<" + element + "\\b[^>]*\\b" + name + "=\"([^\"]*)\"").matcher(dom);
        if (!tag.find()) {
            throw new AssertionError("<" + element + "> has no " + name + " after loading");
        }
        return tag.group(1);
    }

    /** The page's DOM after it loaded and its script ran, as headless Chromium prints it. */
    private String chromiumDom(Path page) throws Exception {
        return chromium("--virtual-time-budget=5000", "--dump-dom", page.toUri().toString());
    }

    private void screenshot(Path page, Path png) throws Exception {
        chromium("--hide-scrollbars", "--window-size=880,3000", "--screenshot=" + png, page.toUri().toString());
    }

    private String chromium(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("chromium", "--headless", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--user-data-dir=" + dir.resolve("chromium-profile")));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(dir.resolve("chromium.err").toFile()).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("chromium ended").isTrue();
        assertThat(process.exitValue()).as(Files.readString(dir.resolve("chromium.err"))).isZero();
        return out;
    }
}
