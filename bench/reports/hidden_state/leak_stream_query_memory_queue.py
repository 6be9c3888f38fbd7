# Source: https://github.com/exiawsh/StreamPETR/issues/63
# Report: in streaming (frame-by-frame) training the propagated query memory must be detached, otherwise the next iteration fails with "Trying to backward through the graph a second time"
# Shape: a detection head keeps a memory queue on self; post_update_memory (called from forward every frame) prepends the top-k decoder outputs to the previous queue without detaching them
# Expect: TML005 line 49
import torch
import torch.nn as nn


def topk_gather(feat, topk_indexes):
    idx = topk_indexes.expand(-1, -1, feat.size(-1))
    return torch.gather(feat, 1, idx)


class StreamQueryHead(nn.Module):
    def __init__(self, decoder, embed_dims=256, num_query=644, memory_len=512, topk_proposals=256):
        super().__init__()
        self.decoder = decoder
        self.query_embed = nn.Embedding(num_query, embed_dims)
        self.cls_branch = nn.Linear(embed_dims, 10)
        self.reg_branch = nn.Linear(embed_dims, 10)
        self.embed_dims = embed_dims
        self.memory_len = memory_len
        self.topk_proposals = topk_proposals
        self.reset_memory()

    def reset_memory(self):
        self.memory_embedding = None
        self.memory_reference_point = None

    def pre_update_memory(self, data, x):
        B = x.size(0)
        if self.memory_embedding is None:
            self.memory_embedding = x.new_zeros(B, self.memory_len, self.embed_dims)
            self.memory_reference_point = x.new_zeros(B, self.memory_len, 3)
        else:
            keep = (~data["prev_exists"]).float().view(B, 1, 1)
            self.memory_embedding = self.memory_embedding[:, : self.memory_len] * (1 - keep)
            self.memory_reference_point = self.memory_reference_point[:, : self.memory_len] * (1 - keep)

    def post_update_memory(self, all_cls_scores, all_bbox_preds, outs_dec):
        rec_reference_points = all_bbox_preds[..., :3][-1]
        rec_memory = outs_dec[-1]
        rec_score = all_cls_scores[-1].sigmoid().topk(1, dim=-1).values[..., 0:1]

        _, topk_indexes = torch.topk(rec_score, self.topk_proposals, dim=1)
        rec_reference_points = topk_gather(rec_reference_points, topk_indexes).detach()
        rec_memory = topk_gather(rec_memory, topk_indexes)

        self.memory_embedding = torch.cat([rec_memory, self.memory_embedding], dim=1)  # expect: TML005
        self.memory_reference_point = torch.cat([rec_reference_points, self.memory_reference_point], dim=1)

    def forward(self, img_feats, data):
        B = img_feats.size(0)
        self.pre_update_memory(data, img_feats)
        query = self.query_embed.weight.unsqueeze(0).expand(B, -1, -1)
        outs_dec = self.decoder(query, img_feats, self.memory_embedding, self.memory_reference_point)
        all_cls_scores = torch.stack([self.cls_branch(o) for o in outs_dec])
        all_bbox_preds = torch.stack([self.reg_branch(o) for o in outs_dec])
        self.post_update_memory(all_cls_scores, all_bbox_preds, outs_dec)
        return {"all_cls_scores": all_cls_scores, "all_bbox_preds": all_bbox_preds}
