# Source: https://github.com/TRI-ML/PF-Track/issues/42
# Report: per-frame backward in a multi-frame tracker; the maintainer agreed that detaching the track attributes that still have grad_fn after backward, then passing them on, is fine
# Shape: same loop, but the track state object is detached (all its tensor attributes) after each backward before the next frame reads it
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class TrackInstances:
    def __init__(self, query_embeds, ref_pts, scores):
        self.query_embeds = query_embeds
        self.ref_pts = ref_pts
        self.scores = scores

    def detach(self):
        return TrackInstances(self.query_embeds.detach(), self.ref_pts.detach(), self.scores.detach())


class QueryUpdater(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.fuse = nn.Linear(2 * dim, dim)
        self.ref_head = nn.Linear(dim, 3)
        self.score_head = nn.Linear(dim, 1)

    def forward(self, frame_feat, tracks):
        ctx = frame_feat.mean(dim=1, keepdim=True).expand_as(tracks.query_embeds)
        q = torch.relu(self.fuse(torch.cat([tracks.query_embeds, ctx], dim=-1)))
        ref = tracks.ref_pts + self.ref_head(q)
        return TrackInstances(q, ref, self.score_head(q).sigmoid())


class ClipTrainer:
    def __init__(self, backbone, updater, criterion, optimizer, num_queries=300, dim=256):
        self.backbone = backbone
        self.updater = updater
        self.criterion = criterion
        self.optimizer = optimizer
        self.num_queries = num_queries
        self.dim = dim

    def empty_tracks(self, device):
        return TrackInstances(
            torch.zeros(1, self.num_queries, self.dim, device=device),
            torch.zeros(1, self.num_queries, 3, device=device),
            torch.zeros(1, self.num_queries, 1, device=device),
        )

    def train_clip(self, frames, targets):
        tracks = self.empty_tracks(frames[0].device)
        clip_loss = 0.0
        for frame, target in zip(frames, targets):
            feat = self.backbone(frame)
            tracks = self.updater(feat, tracks)
            loss = self.criterion(tracks.ref_pts, tracks.scores, target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            tracks = tracks.detach()
            clip_loss += loss.item()
        return clip_loss / len(frames)
