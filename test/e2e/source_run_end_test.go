package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// DESIGN.md contract 9 on kafka_source, with the built binary on the real
// broker: a configuration the broker will never accept ends the run within
// 10s, exit code 1, with a message naming the field (run_end_test.go has
// the sink's side).

// A topic of `topics` that does not exist: the run ends naming the topic
// and the field.
func TestSourceRunEndsOnMissingTopic(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	present := kafkatest.NewTopic(t, brokers, "src-run-end-present", 1)
	missing := present + "-missing"
	config := writeFile(t, "source_missing_topic.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  kafka_source:
    seed_brokers: [ %q ]
    topics: [ %s, %s ]
    consumer_group: %s
output:
  drop: {}
`, brokers, present, missing, present))
	logs, code, took := runConfigToExit(t, 30*time.Second, config)
	t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
	if code == 0 {
		t.Fatalf("exit code 0 for a topic that does not exist:\n%s", logs)
	}
	if took > 10*time.Second {
		t.Errorf("the run took %v to end, want at most 10s", took)
	}
	for _, want := range []string{"connectd: the run stopped:", fmt.Sprintf("topic %q does not exist (field topics)", missing)} {
		if !strings.Contains(logs, want) {
			t.Errorf("output does not contain %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, fmt.Sprintf("topic %q does not", present)) {
		t.Errorf("output blames topic %s, which exists:\n%s", present, logs)
	}
}

// A wrong password on the SASL listener: the brokers never accepted these
// credentials, so the run ends naming the mechanism, the user and the
// fields, never the password.
func TestSourceRunEndsOnWrongPassword(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Broker(t)
	addr, user, password := kafkatest.SASL(t)
	topic := kafkatest.NewTopic(t, brokers, "src-run-end-sasl", 1)
	wrong := "not-" + password
	config := writeFile(t, "source_wrong_password.yaml", fmt.Sprintf(`
http: { enabled: false }
input:
  kafka_source:
    seed_brokers: [ %q ]
    sasl:
      mechanism: SCRAM-SHA-256
      username: %s
      password: %s
    topics: [ %s ]
    consumer_group: %s
output:
  drop: {}
`, addr, user, wrong, topic, topic))
	logs, code, took := runConfigToExit(t, 30*time.Second, config)
	t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
	if code == 0 {
		t.Fatalf("exit code 0 for a wrong password:\n%s", logs)
	}
	if took > 10*time.Second {
		t.Errorf("the run took %v to end, want at most 10s", took)
	}
	for _, want := range []string{"connectd: the run stopped:", "SASL_AUTHENTICATION_FAILED", "mechanism SCRAM-SHA-256",
		fmt.Sprintf("user %q", user), "sasl.username", "sasl.password"} {
		if !strings.Contains(logs, want) {
			t.Errorf("output does not contain %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, wrong) {
		t.Errorf("output leaks the password:\n%s", logs)
	}
}
