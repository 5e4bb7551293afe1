"""The endpoint registry: admins register endpoints in the admin and over the API; everyone
else sees only the names of those they may use."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.authtoken.models import Token

from endpoints.models import Endpoint
from endpoints.selectors import endpoints_usable_by
from tests.factories import UserFactory
from tests.leaderboard.inference_helpers import make_questions, start

pytestmark = pytest.mark.django_db

NEW = {
    "name": "vllm-gpu1",
    "base_url": "HTTP://GPU1.lab:8000/v1/",
    "api_key_env": "VLLM_API_KEY",
    "model_names": ["Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"],
    "description": "the lab's A100",
    "open_to_researchers": False,
    "users": ["ada"],
    "groups": ["lab-a"],
}


def token_client(client: Client, user) -> Client:
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {Token.objects.create(user=user).key}"
    return client


@pytest.fixture
def admin_api(client: Client) -> Client:
    UserFactory(username="ada", role="researcher")
    Group.objects.create(name="lab-a")
    return token_client(client, UserFactory(role="admin"))


def test_an_admin_registers_changes_and_removes_an_endpoint(admin_api: Client) -> None:
    created = admin_api.post("/api/endpoints/", NEW, content_type="application/json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["base_url"] == "http://gpu1.lab:8000/v1"  # one spelling
    assert body["model_names"] == ["Qwen/Qwen2.5-7B-Instruct"]
    assert (body["users"], body["groups"], body["is_active"]) == (["ada"], ["lab-a"], True)
    # Only what is sent changes.
    changed = admin_api.patch(
        "/api/endpoints/vllm-gpu1/",
        {"open_to_researchers": True, "model_names": []},
        content_type="application/json",
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["open_to_researchers"] and changed.json()["model_names"] == []
    assert changed.json()["api_key_env"] == "VLLM_API_KEY" and changed.json()["users"] == ["ada"]
    assert admin_api.get("/api/endpoints/vllm-gpu1/").json()["description"] == "the lab's A100"
    assert admin_api.delete("/api/endpoints/vllm-gpu1/").status_code == 204
    assert not Endpoint.objects.exists()


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"name": "Not A Slug"}, "name", "lower-case letters"),
        ({"api_key_env": "SECRET_KEY"}, "api_key_env", "is not one the platform sends"),
        ({"api_key_env": "sk-live-123"}, "api_key_env", "NAME of the environment variable"),
        ({"base_url": "http://[::ffff:a9fe:a9fe]/v1"}, "base_url", "never a model endpoint"),
        ({"base_url": "ftp://x"}, "base_url", "http(s)://host"),
        ({"users": ["nobody"]}, "usernames", "No such user: nobody"),
        ({"groups": ["nope"]}, "group_names", "No such group: nope"),
    ],
)
def test_the_registry_refuses_bad_endpoints(admin_api: Client, change, field, message) -> None:
    response = admin_api.post("/api/endpoints/", NEW | change, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["field"] == field and message in response.json()["detail"]
    assert not Endpoint.objects.exists()


def test_an_endpoint_that_runs_used_is_deactivated_not_deleted(admin_api: Client) -> None:
    make_questions(1)
    admin_api.post(
        "/api/endpoints/",
        NEW | {"open_to_researchers": True, "model_names": []},
        content_type="application/json",
    )
    start(UserFactory(role="researcher"), "http://gpu1.lab:8000/v1", endpoint="vllm-gpu1")
    refused = admin_api.delete("/api/endpoints/vllm-gpu1/")
    assert refused.status_code == 409 and "deactivate it instead" in refused.json()["detail"]
    off = admin_api.patch(
        "/api/endpoints/vllm-gpu1/", {"is_active": False}, content_type="application/json"
    )
    assert off.json()["is_active"] is False


def test_researchers_see_the_names_they_may_use_and_nothing_else(client: Client) -> None:
    ada = UserFactory(username="ada", role="researcher")
    lab = Group.objects.create(name="lab-b")
    Endpoint.objects.create(name="open", base_url="http://h1/v1", open_to_researchers=True)
    Endpoint.objects.create(name="closed", base_url="http://h2/v1", api_key_env="X_API_KEY")
    Endpoint.objects.create(
        name="off", base_url="http://h3/v1", open_to_researchers=True, is_active=False
    )
    Endpoint.objects.create(name="lab", base_url="http://h4/v1").groups.add(lab)
    Endpoint.objects.create(name="mine", base_url="http://h5/v1").users.add(ada)
    api = token_client(client, ada)
    listed = api.get("/api/endpoints/").json()["results"]
    assert [e["name"] for e in listed] == ["mine", "open"]
    assert set(listed[0]) == {"name", "description", "model_names"}
    ada.groups.add(lab)
    assert [e.name for e in endpoints_usable_by(user=ada)] == ["lab", "mine", "open"]
    # Annotators do not get the ones open to researchers.
    assert not endpoints_usable_by(user=UserFactory(role="annotator")).exists()
    # No changes, and no details, for anyone but admins.
    assert api.get("/api/endpoints/open/").status_code == 403
    assert api.post("/api/endpoints/", NEW, content_type="application/json").status_code == 403
    assert api.patch("/api/endpoints/open/", {}, content_type="application/json").status_code == 403
    assert api.delete("/api/endpoints/open/").status_code == 403
    assert Endpoint.objects.count() == 5


def test_an_admin_registers_an_endpoint_in_the_django_admin(client: Client) -> None:
    client.force_login(UserFactory(role="admin"))
    form = {
        "name": "openai",
        "base_url": "https://API.openai.com/v1/",
        "api_key_env": "OPENAI_API_KEY",
        "model_names": "gpt-4o\ngpt-4o-mini\n",
        "description": "",
        "open_to_researchers": "on",
        "is_active": "on",
    }
    response = client.post("/admin/endpoints/endpoint/add/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    endpoint = Endpoint.objects.get()
    assert endpoint.base_url == "https://api.openai.com/v1"
    assert endpoint.model_names == ["gpt-4o", "gpt-4o-mini"]
    page = client.get(f"/admin/endpoints/endpoint/{endpoint.pk}/change/").content.decode()
    assert "gpt-4o\ngpt-4o-mini</textarea>" in page
    refused = client.post(
        "/admin/endpoints/endpoint/add/",
        form | {"name": "meta", "base_url": "http://169.254.169.254/"},
    )
    assert refused.status_code == 200 and "never a model endpoint" in refused.content.decode()
    assert Endpoint.objects.count() == 1
