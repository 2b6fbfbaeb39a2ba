-- How many distinct phone numbers activation_distinct_phones found.
SELECT count(*) AS numbers FROM distinct_phones
