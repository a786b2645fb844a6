package dev.iomap.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One server of a ZooKeeper ensemble, as a {@code zoo.cfg} names it ({@code server.ID=HOST:QUORUM:ELECTION},
 * and its client port): written {@code ID=HOST:CLIENT:QUORUM:ELECTION}, e.g.
 * {@code 1=127.0.0.1:2181:2888:3888}.
 *
 * @param id the server's id ({@code myid}), 1 to 255
 * @param host the address it binds and peers reach it at (a name or an IPv4 address)
 * @param clientPort where clients connect
 * @param quorumPort where followers connect to the leader
 * @param electionPort where servers talk during leader election
 */
public record EnsembleServer(int id, String host, int clientPort, int quorumPort, int electionPort) {
    private static final Pattern FORM = Pattern.compile("(\\d{1,3})=([A-Za-z0-9.\\-]+):(\\d{1,5}):(\\d{1,5}):(\\d{1,5})");
    /** Quorum ports of {@link #onLoopback} start this far above the first client port (2181 + 707 = 2888). */
    private static final int QUORUM_OFFSET = 707;
    /** Election ports of {@link #onLoopback} start this far above the first client port (3888). */
    private static final int ELECTION_OFFSET = 1707;

    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException if the id is not 1 to 255, the host is empty, a port is not 1 to
     *     65535, or two of the ports are the same
     */
    public EnsembleServer {
        Objects.requireNonNull(host, "host");
        if (id < 1 || id > 255) {
            throw new IllegalArgumentException("server id " + id + " is not 1 to 255");
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("server " + id + " has no host");
        }
        for (int port : new int[] {clientPort, quorumPort, electionPort}) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("server " + id + ": port " + port + " is not 1 to 65535");
            }
        }
        if (clientPort == quorumPort || clientPort == electionPort || quorumPort == electionPort) {
            throw new IllegalArgumentException("server " + id + " needs three different ports, has " + clientPort + ":"
                    + quorumPort + ":" + electionPort);
        }
    }

    /**
     * @param text {@code ID=HOST:CLIENT:QUORUM:ELECTION[,...]}
     * @return the servers, in the order given
     * @throws IllegalArgumentException if an entry is not of that form, or two have the same id
     */
    public static List<EnsembleServer> parseList(String text) {
        List<EnsembleServer> servers = new ArrayList<>();
        for (String entry : text.split(",", -1)) {
            Matcher matcher = FORM.matcher(entry.strip());
            if (!matcher.matches()) {
                throw new IllegalArgumentException("'" + entry + "' is not ID=HOST:CLIENT:QUORUM:ELECTION, e.g."
                        + " 1=127.0.0.1:2181:2888:3888");
            }
            var server = new EnsembleServer(Integer.parseInt(matcher.group(1)), matcher.group(2),
                    Integer.parseInt(matcher.group(3)), Integer.parseInt(matcher.group(4)),
                    Integer.parseInt(matcher.group(5)));
            if (servers.stream().anyMatch(s -> s.id() == server.id())) {
                throw new IllegalArgumentException("server id " + server.id() + " is given twice");
            }
            servers.add(server);
        }
        return List.copyOf(servers);
    }

    /**
     * Three servers on 127.0.0.1 with ZooKeeper's usual ports counted from {@code firstClientPort}:
     * client ports {@code P, P+1, P+2}, quorum ports {@code P+707...} and election ports
     * {@code P+1707...} (for {@code P = 2181}: 2181-2183, 2888-2890 and 3888-3890).
     *
     * @param firstClientPort P, at most 63826 (so that every port fits)
     * @return servers 1, 2 and 3
     */
    public static List<EnsembleServer> onLoopback(int firstClientPort) {
        if (firstClientPort < 1 || firstClientPort + ELECTION_OFFSET + 2 > 65535) {
            throw new IllegalArgumentException("first client port " + firstClientPort + " leaves no room for the"
                    + " ensemble's ports (1 to " + (65535 - ELECTION_OFFSET - 2) + ")");
        }
        List<EnsembleServer> servers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            servers.add(new EnsembleServer(i + 1, "127.0.0.1", firstClientPort + i,
                    firstClientPort + QUORUM_OFFSET + i, firstClientPort + ELECTION_OFFSET + i));
        }
        return List.copyOf(servers);
    }

    /**
     * @param servers an ensemble
     * @return the clients' connect string: {@code HOST:CLIENT,HOST:CLIENT,...}
     */
    public static String connectString(List<EnsembleServer> servers) {
        return servers.stream().map(EnsembleServer::clientAddress).collect(Collectors.joining(","));
    }

    /** @return {@code HOST:CLIENT} */
    public String clientAddress() {
        return host + ":" + clientPort;
    }

    /** @return the server's line in {@code zoo.cfg}: {@code HOST:QUORUM:ELECTION} (its key is {@code server.ID}) */
    String quorumAddress() {
        return host + ":" + quorumPort + ":" + electionPort;
    }

    /** @return {@code ID=HOST:CLIENT:QUORUM:ELECTION}, as {@link #parseList} reads it */
    @Override
    public String toString() {
        return id + "=" + host + ":" + clientPort + ":" + quorumPort + ":" + electionPort;
    }
}
