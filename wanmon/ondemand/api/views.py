"""Tests on demand over HTTP: operators ask (POST /api/v1/tests), anyone logged in reads (GET /api/v1/tests/{id}),
agents fetch their jobs with their token (GET /api/v1/agent/jobs). Each view calls one service or selector."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from wanmon.core.api import input_data, service_refusals
from wanmon.core.permissions import IsOperator
from wanmon.measurements.api.auth import AgentIngestThrottle, AgentScopeAllowed, AgentTokenAuthentication
from wanmon.measurements.api.upload import AgentUploadView
from wanmon.ondemand import constants
from wanmon.ondemand.api import serializers as s
from wanmon.ondemand.selectors import job_get
from wanmon.ondemand.services import JobRequest, job_request, jobs_claim


class TestListView(APIView):
    """Ask for a test now (operators)."""

    __test__ = False
    permission_classes = [IsOperator]

    @extend_schema(
        operation_id="tests_create",
        request=s.TestRequestInput,
        responses={
            201: s.TestCreatedOutput,
            400: OpenApiResponse(description="a field is invalid (named)"),
            409: OpenApiResponse(s.TestRefusedOutput, description="refused: the path's state (rule named)"),
            422: OpenApiResponse(s.TestRefusedOutput, description="refused: out of the policy's bounds (rule named)"),
        },
    )
    def post(self, request):
        data = input_data(s.TestRequestInput, request.data)
        with service_refusals():
            job, refusal = job_request(request=JobRequest(**data), requested_by=request.user, now=timezone.now())
        if refusal is not None:
            body = {"id": job.pk, "status": job.status, "rule": job.rule, "reason": job.reason,
                    "errors": [{"path": "", "message": job.reason}]}  # fmt: skip
            return Response(body, status=refusal.status)
        return Response({"id": job.pk, "status": job.status}, status=status.HTTP_201_CREATED)


class TestDetailView(APIView):
    """A test on demand: its status, the reason, the result."""

    __test__ = False
    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="tests_retrieve", responses={200: s.JobSerializer})
    def get(self, request, pk: int):
        job = job_get(pk)
        if job is None:
            raise NotFound(f"no test {pk}")
        return Response(s.JobSerializer(job).data)


AGENT_JOBS = inline_serializer(
    "AgentJobs",
    {"jobs": s.AgentJobSerializer(many=True), "poll_s": serializers.FloatField(help_text="ask again this soon")},
)


class AgentJobsView(AgentUploadView):
    """The calling agent's jobs: queued ones are handed over (running from now), running ones not reported yet are
    handed again (the agent may have restarted)."""

    authentication_classes = [AgentTokenAuthentication]
    permission_classes = [IsAuthenticated, AgentScopeAllowed]
    throttle_classes = [AgentIngestThrottle]

    @extend_schema(
        operation_id="agent_jobs", responses={200: AGENT_JOBS, 401: OpenApiResponse(description="no or bad token")}
    )
    def get(self, request):
        jobs = jobs_claim(agent=request.user.agent, now=timezone.now())
        return Response({"jobs": s.AgentJobSerializer(jobs, many=True).data, "poll_s": constants.AGENT_POLL_S})
