"""Tests of the Helm chart, the Dockerfile and their agreement with the code they deploy."""
