package dev.iomap.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code iomap4j-bom} lists every published module of the reactor at the reactor's version, so a new
 * module or a version bump cannot leave the BOM behind (issue 18).
 */
class BomTest {
    /**
     * Modules that are not published: the integration tests, the JMH benchmarks, the BOM itself, the
     * worked examples and the multi-host test bed's driver (a tool of bench/cluster-hosts.sh).
     */
    private static final Set<String> UNPUBLISHED = Set.of("it-tests", "benchmarks", "iomap4j-bom",
            "examples/ext2-like", "bench/testbed");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern MANAGED = Pattern.compile(
            "<groupId>dev\\.iomap</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*<version>([^<]+)</version>");

    /** The working directory of a module's tests is the module; the reactor root is its parent. */
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    @Test
    void theBomManagesEveryPublishedModuleAtTheReactorVersion() throws IOException {
        String parent = Files.readString(ROOT.resolve("pom.xml"));
        String version = firstMatch(Pattern.compile(
                "<artifactId>iomap4j-parent</artifactId>\\s*<version>([^<]+)</version>"), parent);
        Set<String> published = new TreeSet<>();
        Matcher modules = MODULE.matcher(parent);
        while (modules.find()) {
            String module = modules.group(1);
            if (!UNPUBLISHED.contains(module)) {
                String pom = Files.readString(ROOT.resolve(module).resolve("pom.xml"));
                published.add(firstMatch(Pattern.compile("</parent>\\s*<artifactId>([^<]+)</artifactId>"), pom));
            }
        }
        assertThat(published).as("published modules").contains("iomap-api", "iomap-core", "iomap-testkit");

        String bom = Files.readString(ROOT.resolve("iomap4j-bom").resolve("pom.xml"));
        assertThat(firstMatch(Pattern.compile("<artifactId>iomap4j-bom</artifactId>\\s*<version>([^<]+)</version>"),
                bom)).as("the BOM's own version").isEqualTo(version);
        Set<String> managed = new TreeSet<>();
        List<String> versions = new ArrayList<>();
        Matcher entries = MANAGED.matcher(bom.substring(bom.indexOf("<dependencyManagement>")));
        while (entries.find()) {
            managed.add(entries.group(1));
            versions.add(entries.group(2));
        }
        assertThat(managed).as("artifacts the BOM manages").isEqualTo(published);
        assertThat(versions).as("their versions").containsOnly(version);
        assertThat(bom).as("the kit's JUnit comes with it").contains("<artifactId>junit-bom</artifactId>");
    }

    private static String firstMatch(Pattern pattern, String text) {
        Matcher matcher = pattern.matcher(text);
        assertThat(matcher.find()).as(pattern.pattern()).isTrue();
        return matcher.group(1);
    }
}
