package dev.iomap.spi.lock;

import dev.iomap.api.ClusterSpec;
import dev.iomap.api.NotSupportedException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Connects mounts to a kind of cluster service, named by a scheme ({@code zk}: ZooKeeper, provided by
 * iomap-cluster). Listed for {@link ServiceLoader} in {@code META-INF/services}; the runtime picks the
 * provider of a {@link ClusterSpec#scheme()} when {@link dev.iomap.api.MountOptions#cluster()} asks for
 * a cluster mount. Implementations are thread-safe.
 */
public interface ClusterJoinProvider {

    /** @return the scheme this provider serves, e.g. {@code zk} */
    String scheme();

    /**
     * Connects one mount: waits until the service answers, and settles the node's id (the spec's, or a
     * new unique one).
     *
     * @param spec the cluster, whose scheme is this provider's
     * @return the connection, which the caller closes after the unmount
     * @throws IOException if the service cannot be reached in the provider's connection timeout
     * @throws IllegalArgumentException if the spec's address is not one this provider reads
     */
    ClusterConnection connect(ClusterSpec spec) throws IOException;

    /**
     * @param scheme a cluster scheme
     * @return the provider on the class path of {@link ClusterJoinProvider}'s class loader serving it
     * @throws NotSupportedException if none does, naming the schemes there are
     */
    static ClusterJoinProvider forScheme(String scheme) throws NotSupportedException {
        List<String> schemes = new ArrayList<>();
        for (ClusterJoinProvider provider
                : ServiceLoader.load(ClusterJoinProvider.class, ClusterJoinProvider.class.getClassLoader())) {
            if (provider.scheme().equals(scheme)) {
                return provider;
            }
            schemes.add(provider.scheme());
        }
        throw new NotSupportedException("no cluster provider for '" + scheme + "=' on the class path ("
                + (schemes.isEmpty() ? "none: add iomap-cluster for zk=" : "schemes: " + String.join(", ", schemes))
                + ")");
    }
}
