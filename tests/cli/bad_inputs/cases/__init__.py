"""The cases of make_cases.py by topic; each module appends its cases to common.cases when it runs."""
