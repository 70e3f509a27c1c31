package schema

import "strings"

// Flink SQL statements and clauses that a catalog or ddl may hold in a Flink
// job's SQL file but that connectd does not run: each is refused by name,
// with what to do instead, rather than as a bare syntax error.

// refuseStatement refuses a statement other than CREATE TABLE by name.
func (p *parser) refuseStatement() error {
	c := p.cur()
	if c.kind != tIdent {
		return nil
	}
	const onlyCreate = "a catalog or ddl holds CREATE TABLE statements only; "
	const pipeline = "the YAML pipeline moves the rows (a kafka_source input reading one table, a kafka_sink output writing another)"
	kw := strings.ToUpper(c.text)
	switch {
	case c.is("SET") || c.is("RESET"):
		return p.errf("%s statements are not supported by connectd: %sthe job's settings are fields of the YAML config", kw, onlyCreate)
	case c.is("INSERT") || c.is("EXECUTE") || c.is("BEGIN"):
		return p.errf("%s statements are not supported by connectd: %s%s", kw, onlyCreate, pipeline)
	case c.is("SELECT"):
		return p.errf("SELECT queries are not supported by connectd: %sfilter and map rows in the YAML pipeline with the cel processor", onlyCreate)
	case c.is("CREATE") && p.peek(1).is("OR") && p.peek(2).is("REPLACE"):
		return p.errf("CREATE OR REPLACE TABLE is not supported by connectd: %s%s", onlyCreate, pipeline)
	}
	return nil
}

// peek returns the token n after the current one (end of input past it).
func (p *parser) peek(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

// refuseTableClause refuses the clauses between the column list and WITH
// that Flink's Kafka connectors do not support either.
func (p *parser) refuseTableClause() error {
	switch c := p.cur(); {
	case c.is("PARTITIONED"):
		return p.errf("PARTITIONED BY is not supported by connectd: Flink refuses partitioned Kafka tables too (its Kafka connectors do not implement SupportsPartitioning; a Kafka partition is not a table partition)")
	case c.is("DISTRIBUTED"):
		return p.errf("DISTRIBUTED BY / INTO ... BUCKETS is not supported by connectd: Flink refuses it for Kafka tables too (its Kafka connectors do not implement SupportsBucketing); the Kafka key (key.fields or the PRIMARY KEY) and sink.partitioner choose the partition")
	}
	return nil
}

// refuseAsSelect refuses CREATE TABLE ... AS SELECT.
func (p *parser) refuseAsSelect() error {
	if !p.cur().is("AS") {
		return nil
	}
	return p.errf("CREATE TABLE ... AS SELECT is not supported by connectd: a catalog or ddl declares tables; " +
		"the YAML pipeline moves the rows (a kafka_source input reading one table, a kafka_sink output writing another)")
}
