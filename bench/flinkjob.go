package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The Flink job (bench/flink: a pom and a small DataStream job) is built with
// Maven from Maven Central into a cache, as scripts/kafka.sh caches Kafka's
// jars, and run with java as its own process per round.

var (
	flinkVersion      = flag.String("flink-version", "2.2.1", "Apache Flink version from Maven Central (flink scenario)")
	flinkKafkaVersion = flag.String("flink-kafka-version", "5.0.0-2.2", "flink-connector-kafka version matching -flink-version (flink scenario)")
)

// flinkJava17Opts are the module options a Flink 2.x distribution passes
// every JVM on Java 17 (flink-dist's config.yaml, env.java.opts.all): Flink
// reflects into java.base, for instance to serialize a task's failure, and
// without them such an error path dies of InaccessibleObjectException
// instead of reporting the failure.
var flinkJava17Opts = strings.Fields(`--add-exports=java.base/sun.net.util=ALL-UNNAMED
--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED
--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
--add-opens=java.base/java.lang=ALL-UNNAMED
--add-opens=java.base/java.net=ALL-UNNAMED
--add-opens=java.base/java.io=ALL-UNNAMED
--add-opens=java.base/java.nio=ALL-UNNAMED
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED
--add-opens=java.base/java.lang.reflect=ALL-UNNAMED
--add-opens=java.base/java.text=ALL-UNNAMED
--add-opens=java.base/java.time=ALL-UNNAMED
--add-opens=java.base/java.util=ALL-UNNAMED
--add-opens=java.base/java.util.concurrent=ALL-UNNAMED
--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED`)

//go:embed flink/pom.xml flink/src
var flinkJobSources embed.FS

// flinkJob is the built job: the java command and classpath that run it.
type flinkJob struct {
	java      string
	version   string // java -version's first line
	classpath string
	javaOpts  []string
}

// buildFlinkJob returns the Flink job, building it with Maven into
// $CONNECTD_FLINK_CACHE (default ~/.cache/connectd/flink-<version>) unless
// a build of the same sources and versions is there already.
func buildFlinkJob(ctx context.Context) (flinkJob, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return flinkJob{}, fmt.Errorf("the flink scenario needs java (Java 17 or later) on PATH: %w", err)
	}
	job := flinkJob{java: java, javaOpts: strings.Fields(os.Getenv("BENCH_FLINK_JAVA_OPTS"))}
	v, err := exec.CommandContext(ctx, java, "-version").CombinedOutput()
	if err != nil {
		return flinkJob{}, fmt.Errorf("java -version: %w", err)
	}
	job.version, _, _ = strings.Cut(strings.TrimSpace(string(v)), "\n")
	cache := os.Getenv("CONNECTD_FLINK_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return flinkJob{}, fmt.Errorf("no cache dir for the Flink jars (set CONNECTD_FLINK_CACHE): %w", err)
		}
		cache = filepath.Join(home, ".cache", "connectd", "flink-"+*flinkVersion)
	}
	dir := filepath.Join(cache, "job")
	job.classpath = filepath.Join(dir, "target", "flink-bench.jar") + string(os.PathListSeparator) +
		filepath.Join(dir, "target", "libs", "*")
	key, err := flinkBuildKey()
	if err != nil {
		return flinkJob{}, err
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".complete")); err == nil && string(b) == key {
		return job, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return flinkJob{}, fmt.Errorf("the flink scenario builds its job with Maven (mvn, from Maven Central; "+
			"`scripts/kafka.sh deps` installs it): %w", err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return flinkJob{}, err
	}
	tmp, err := os.MkdirTemp(cache, "job.tmp-")
	if err != nil {
		return flinkJob{}, err
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(flinkJobSources, "flink", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := flinkJobSources.ReadFile(path)
		if err != nil {
			return err
		}
		to := filepath.Join(tmp, strings.TrimPrefix(path, "flink/"))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return flinkJob{}, err
	}
	fmt.Fprintf(os.Stderr, "building the Flink %s job (flink-connector-kafka %s) with Maven in %s\n", *flinkVersion, *flinkKafkaVersion, dir)
	start := time.Now()
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-Dstyle.color=never",
		"-Dflink.version="+*flinkVersion, "-Dflink.kafka.version="+*flinkKafkaVersion,
		"package", "dependency:copy-dependencies")
	cmd.Dir = tmp
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return flinkJob{}, fmt.Errorf("mvn package of the Flink job (org.apache.flink:flink-streaming-java:%s, "+
			"flink-connector-kafka:%s from Maven Central; output above): %w", *flinkVersion, *flinkKafkaVersion, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(key), 0o644); err != nil {
		return flinkJob{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return flinkJob{}, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return flinkJob{}, err
	}
	fmt.Fprintf(os.Stderr, "built in %v\n", time.Since(start).Round(time.Second))
	return job, nil
}

// flinkBuildKey names a build: the versions and every embedded source.
func flinkBuildKey() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "flink %s kafka %s\n", *flinkVersion, *flinkKafkaVersion)
	err := fs.WalkDir(flinkJobSources, "flink", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := flinkJobSources.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// flinkOutput is the job's JSON line (bench/flink FlinkBench.main).
type flinkOutput struct {
	RecordsRead      int64   `json:"records_read"`
	RecordsSunk      int64   `json:"records_sunk"`
	FirstRecordMs    int64   `json:"first_record_ms"`
	LastRecordMs     int64   `json:"last_record_ms"`
	EndMs            int64   `json:"end_ms"`
	FirstRecordCPU   float64 `json:"first_record_cpu_s"`
	LastRecordCPU    float64 `json:"last_record_cpu_s"`
	EndCPU           float64 `json:"end_cpu_s"`
	NetRuntimeMillis int64   `json:"net_runtime_ms"`
}

// flinkRun is one run of the job: the JSON line, and the process as the
// kernel saw it.
type flinkRun struct {
	out     flinkOutput
	start   time.Time // just before the java process started
	wall    float64   // process start to exit, seconds
	cpu     float64   // user+system seconds of the process (rusage)
	peakRSS int64     // KiB
}

// run runs the job with args (--name value pairs) and returns its figures.
func (j flinkJob) run(ctx context.Context, args ...string) (flinkRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	logf, err := os.CreateTemp("", "flink-bench-*.log")
	if err != nil {
		return flinkRun{}, err
	}
	logf.Close()
	argv := append(slices.Concat(flinkJava17Opts, j.javaOpts), "-Dflink.bench.log="+logf.Name(), "-cp", j.classpath, "io.connectd.bench.FlinkBench")
	cmd := exec.CommandContext(ctx, j.java, append(argv, args...)...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	r := flinkRun{start: time.Now()}
	err = cmd.Run()
	r.wall = time.Since(r.start).Seconds()
	if err != nil {
		return r, fmt.Errorf("flink job %s: %w (its log, WARN and up, kept in %s; tail:\n%s)",
			strings.Join(args, " "), err, logf.Name(), tail(logf.Name(), 40))
	}
	os.Remove(logf.Name())
	r.cpu = cmd.ProcessState.UserTime().Seconds() + cmd.ProcessState.SystemTime().Seconds()
	r.peakRSS = maxRSSKiB(cmd.ProcessState)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if err := json.Unmarshal([]byte(last), &r.out); err != nil {
		return r, fmt.Errorf("flink job %s: output %q: %w", strings.Join(args, " "), last, err)
	}
	if r.out.FirstRecordMs == 0 {
		return r, errors.New("flink job: no record read")
	}
	return r, nil
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// optsText names the JVM options of the runs for the report.
func (j flinkJob) optsText() string {
	if len(j.javaOpts) == 0 {
		return "the JVM's defaults (BENCH_FLINK_JAVA_OPTS unset) and the Java 17 module options of flink-dist"
	}
	return "`" + strings.Join(j.javaOpts, " ") + "` and the Java 17 module options of flink-dist"
}
