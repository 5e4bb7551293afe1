from django.urls import path

from hctqa.accounts import views

app_name = "accounts"

urlpatterns = [
    path("", views.account, name="account"),
    path("sign-up/", views.sign_up, name="sign_up"),
    path("token/", views.token_rotate, name="token_rotate"),
]
