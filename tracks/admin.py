from django.contrib import admin

from tracks.models import GroundTruthSet, ItemBuild, TrackItem


@admin.register(TrackItem)
class TrackItemAdmin(admin.ModelAdmin):
    list_display = ("item_id", "track", "mode", "split", "source", "updated_at")
    list_filter = ("track", "mode", "split", "source")
    search_fields = ("item_id", "table_key")
    raw_id_fields = ("table", "ground_truth_set")
    readonly_fields = ("digest", "built_from", "created_at", "updated_at")


@admin.register(GroundTruthSet)
class GroundTruthSetAdmin(admin.ModelAdmin):
    list_display = ("code", "name", "documents", "tables", "imported_at")
    search_fields = ("code", "name")
    readonly_fields = ("documents", "tables", "imported_by", "imported_at")


@admin.register(ItemBuild)
class ItemBuildAdmin(admin.ModelAdmin):
    list_display = ("id", "status", "progress", "stage", "created_at", "finished_at")
    list_filter = ("status",)
    readonly_fields = ("counts", "error", "heartbeat_at", "started_at", "finished_at")
