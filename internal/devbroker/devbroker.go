// Package devbroker runs an in-process Kafka-compatible development broker
// (franz-go's kfake) on loopback, for demos and local work.
//
// It is NOT for production: kfake keeps data in memory (or in a plain data
// directory without fsync guarantees), runs one process, implements the Kafka
// protocol for testing rather than durability, and has no replication.
package devbroker

import (
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Config says how to start the development broker.
type Config struct {
	// Port on 127.0.0.1. 0 picks a free port.
	Port int
	// Partitions is the partition count of auto-created topics. Default 1.
	Partitions int
	// Topics are created at start with Partitions partitions each.
	Topics []string
	// DataDir, when set, persists the broker's state there across restarts.
	DataDir string
}

// Broker is a running development broker.
type Broker struct {
	cluster *kfake.Cluster
}

// Start starts the broker. Topics are created on first use.
func Start(c Config) (*Broker, error) {
	if c.Partitions <= 0 {
		c.Partitions = 1
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(c.Port),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(c.Partitions),
	}
	if len(c.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(c.Partitions), c.Topics...))
	}
	if c.DataDir != "" {
		opts = append(opts, kfake.DataDir(c.DataDir))
	}
	cl, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting development broker on 127.0.0.1:%d: %w", c.Port, err)
	}
	return &Broker{cluster: cl}, nil
}

// ParseAddr accepts `PORT`, `:PORT` or `127.0.0.1:PORT` and returns the port.
// Any host other than loopback is refused: the development broker only listens
// on 127.0.0.1.
func ParseAddr(s string) (int, error) {
	host, portStr := "", s
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, portStr = h, p
	}
	switch host {
	case "", "127.0.0.1", "localhost":
	default:
		return 0, fmt.Errorf("development broker address %q: only loopback (127.0.0.1) is allowed", s)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return 0, fmt.Errorf("development broker address %q: want PORT or 127.0.0.1:PORT", s)
	}
	return port, nil
}

// Addrs returns the broker's bootstrap addresses.
func (b *Broker) Addrs() []string { return b.cluster.ListenAddrs() }

// Close stops the broker.
func (b *Broker) Close() { b.cluster.Close() }
