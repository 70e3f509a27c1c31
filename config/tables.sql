-- Catalog of tables for the config/table_*.yaml pipelines, in Flink SQL.
-- Components reference a table by name: `catalog: ./config/tables.sql` and
-- `table: user_events`.

-- The seed table of issue 5: JSON user events with an event-time watermark.
-- This and device_metrics are the statements of schema/testdata/seed.sql,
-- renamed (TestExampleCatalogHoldsTheSeed in schema keeps them the same).
CREATE TABLE user_events (
    user_id STRING,
    event_time TIMESTAMP(3),
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka',
    'topic' = 'user_events',
    'properties.bootstrap.servers' = 'kafka:9092',
    'properties.group.id' = 'flink-consumer',
    'format' = 'json',
    'scan.startup.mode' = 'latest-offset',
    'scan.topic-partition-discovery.interval' = '1 min'
);

-- Refunds as semicolon-separated lines, with NULL written as `\N`.
CREATE TABLE refunds (
    refund_id BIGINT NOT NULL,
    order_id BIGINT NOT NULL,
    amount DECIMAL(12, 2),
    reason STRING,
    refunded_at TIMESTAMP_LTZ(3)
) WITH (
    'format' = 'csv',
    'csv.field-delimiter' = ';',
    'csv.null-literal' = '\N'
);

-- The seed's sink table of issue 5: device metrics in avro-confluent,
-- written exactly-once. Unlike Flink, connectd accepts the PRIMARY KEY on the
-- plain kafka connector: its column is the Kafka key (one STRING column:
-- written as is, format raw). See config/table_kafka.yaml.
CREATE TABLE device_metrics (
    device_id STRING,
    metric_value DOUBLE,
    PRIMARY KEY (device_id) NOT ENFORCED
) WITH (
    'connector' = 'kafka',
    'topic' = 'device_metrics',
    'properties.bootstrap.servers' = 'kafka:9092',
    'format' = 'avro-confluent',
    'avro-confluent.url' = 'http://schema-registry:8081',
    'sink.delivery-guarantee' = 'exactly-once',
    'sink.transactional-id-prefix' = 'flink-producer-'
);
