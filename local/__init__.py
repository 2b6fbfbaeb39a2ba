"""The local stack: the whole service on one machine with no AWS, no Docker and no internet.

moto server stands in for AWS (resources created from ``template.yaml`` itself), a local HTTP API
gateway reads the routes from the same template and sends payload-2.0 events to the runner, which
runs each function in worker processes of its own with its environment and its IAM role's
credentials, and the platform sandbox stands in for the advertising platform.
"""
