package kafkaconn

import "fmt"

// CompatHints are the hints (speclint.RegisterFieldHints) for the
// connection fields as Redpanda Connect's Kafka components spell them,
// shared by kafka_source and kafka_sink.
func CompatHints() map[string]string {
	return map[string]string{
		FieldSASL: fmt.Sprintf("connectd takes one mechanism, as an object (`%s: { %s: %s, %s: ..., %s: ... }`), "+
			"not Redpanda Connect's list: keep the one entry the brokers accept",
			FieldSASL, FieldSASLMechanism, MechanismScramSHA512, FieldSASLUsername, FieldSASLPassword),
	}
}
