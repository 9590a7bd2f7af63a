# The wanmon image for web, worker and beat (see docker-compose.yml).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 WANMON_STATIC_ROOT=/app/staticfiles WANMON_STATIC_MANIFEST=true
WORKDIR /app
COPY pyproject.toml README.md ./
COPY wanmon ./wanmon
COPY collectors ./collectors
COPY agents ./agents
COPY templates ./templates
COPY static ./static
COPY manage.py ./
# collectstatic reads the settings, which refuse to load without a secret key: a throw-away one for this step only.
RUN pip install --no-cache-dir -e . && WANMON_SECRET_KEY=collectstatic-at-image-build-time-not-a-real-key python manage.py collectstatic --noinput \
    && useradd --system --uid 1000 wanmon
USER wanmon
EXPOSE 8000
