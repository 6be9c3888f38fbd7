# Source: https://github.com/pytorch/serve/pull/501
# Report: TorchServe default handlers ran the model in inference() without torch.no_grad(), so each request built an autograd graph and the worker's memory rose after inference
# Shape: a model-server handler class: initialize() calls eval(), the per-request inference() method forwards the batch with grad enabled and returns the logits
# Expect: TML003 line 50
import io
import json
import os

import torch
import torch.nn.functional as F
from PIL import Image
from torchvision import transforms


class ImageClassifierHandler:
    topk = 5

    def __init__(self):
        self.model = None
        self.device = None
        self.mapping = None
        self.initialized = False
        self.transform = transforms.Compose([
            transforms.Resize(256),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
            transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        ])

    def initialize(self, context):
        props = context.system_properties
        model_dir = props.get("model_dir")
        gpu = props.get("gpu_id")
        self.device = torch.device(f"cuda:{gpu}" if torch.cuda.is_available() and gpu is not None else "cpu")
        self.model = torch.jit.load(os.path.join(model_dir, "model.pt"), map_location=self.device)
        self.model.eval()
        with open(os.path.join(model_dir, "index_to_name.json")) as f:
            self.mapping = json.load(f)
        self.initialized = True

    def preprocess(self, data):
        images = []
        for row in data:
            payload = row.get("data") or row.get("body")
            image = Image.open(io.BytesIO(payload)).convert("RGB")
            images.append(self.transform(image))
        return torch.stack(images).to(self.device)

    def inference(self, data, *args, **kwargs):
        results = self.model(data, *args, **kwargs)  # expect: TML003
        return results

    def postprocess(self, data):
        ps = F.softmax(data, dim=1)
        probs, classes = torch.topk(ps, self.topk, dim=1)
        out = []
        for p_row, c_row in zip(probs.tolist(), classes.tolist()):
            out.append({self.mapping[str(c)]: p for p, c in zip(p_row, c_row)})
        return out

    def handle(self, data, context):
        batch = self.preprocess(data)
        logits = self.inference(batch)
        return self.postprocess(logits)
