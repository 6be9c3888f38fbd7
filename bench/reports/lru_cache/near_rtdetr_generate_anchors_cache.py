# Source: https://github.com/huggingface/transformers/pull/45922
# Report: lru_cache on RT-DETR model methods kept whole models alive after del model
# Shape: no cache on the method: default anchors are computed once in __init__ and registered as non-persistent buffers (they die with the model); other sizes are recomputed per call
# Expect: near-miss: must be silent
import gc

import torch
from torch import nn


class RTDetrModel(nn.Module):
    def __init__(self, config, backbone, encoder, decoder):
        super().__init__()
        self.config = config
        self.backbone = backbone
        self.encoder = encoder
        self.decoder = decoder
        self.enc_output = nn.Sequential(nn.Linear(config.d_model, config.d_model), nn.LayerNorm(config.d_model))
        self.enc_score_head = nn.Linear(config.d_model, config.num_labels)
        anchors, valid_mask = self.generate_anchors()
        self.register_buffer("default_anchors", anchors, persistent=False)
        self.register_buffer("default_valid_mask", valid_mask, persistent=False)

    def generate_anchors(self, spatial_shapes=None, grid_size=0.05, device="cpu", dtype=torch.float32):
        if spatial_shapes is None:
            spatial_shapes = [
                [int(self.config.anchor_image_size[0] / s), int(self.config.anchor_image_size[1] / s)]
                for s in self.config.feat_strides
            ]
        anchors = []
        for level, (height, width) in enumerate(spatial_shapes):
            grid_y, grid_x = torch.meshgrid(
                torch.arange(end=height, device=device).to(dtype),
                torch.arange(end=width, device=device).to(dtype),
                indexing="ij",
            )
            grid_xy = torch.stack([grid_x, grid_y], -1)
            grid_xy = (grid_xy.unsqueeze(0) + 0.5) / torch.tensor([width, height], device=device).to(dtype)
            wh = torch.ones_like(grid_xy) * grid_size * (2.0**level)
            anchors.append(torch.concat([grid_xy, wh], -1).reshape(-1, height * width, 4))
        eps = 1e-2
        anchors = torch.concat(anchors, 1)
        valid_mask = ((anchors > eps) * (anchors < 1 - eps)).all(-1, keepdim=True)
        anchors = torch.log(anchors / (1 - anchors))
        anchors = torch.where(valid_mask, anchors, torch.tensor(torch.finfo(dtype).max, dtype=dtype, device=device))
        return anchors, valid_mask

    def forward(self, pixel_values):
        features = self.backbone(pixel_values)
        memory = self.encoder(features)
        spatial_shapes = tuple((f.shape[-2], f.shape[-1]) for f in features)
        if memory.shape[1] == self.default_anchors.shape[1]:
            anchors, valid_mask = self.default_anchors.to(memory.dtype), self.default_valid_mask
        else:
            anchors, valid_mask = self.generate_anchors(spatial_shapes, device=pixel_values.device, dtype=memory.dtype)
        output_memory = self.enc_output(valid_mask.to(memory.dtype) * memory)
        enc_logits = self.enc_score_head(output_memory)
        return self.decoder(output_memory, anchors, enc_logits)


def benchmark_checkpoints(build_model, checkpoints, images):
    for ckpt in checkpoints:
        model = build_model(ckpt).cuda().eval()
        with torch.no_grad():
            for batch in images:
                model(batch.cuda())
        del model
        gc.collect()
