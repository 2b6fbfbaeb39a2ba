-- The tables the Python normaliser fills with what the bulk rules cannot decide (see
-- activation_normalised): value is the final (hashed) value, '' when dropped, reason the DropReason.
CREATE OR REPLACE TABLE country_rules (raw VARCHAR, value VARCHAR, reason VARCHAR, code VARCHAR, plan VARCHAR);
CREATE OR REPLACE TABLE name_rules (raw VARCHAR, value VARCHAR, reason VARCHAR);
CREATE OR REPLACE TABLE email_rules (raw VARCHAR, value VARCHAR, reason VARCHAR);
CREATE OR REPLACE TABLE phone_shapes (
    plan VARCHAR, international BOOLEAN, length BIGINT, head VARCHAR,
    decided BOOLEAN, cut BIGINT, prefix VARCHAR, reason VARCHAR
);
CREATE OR REPLACE TABLE phone_numbers (
    plan VARCHAR, international BOOLEAN, digits VARCHAR, cut BIGINT, prefix VARCHAR, reason VARCHAR
)
