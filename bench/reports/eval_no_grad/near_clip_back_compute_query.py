# Source: https://github.com/rom1504/clip-retrieval/pull/81
# Report: PR "use torch no grad to fix a memleak in clip back": the clip back knn service encoded text/image queries with the CLIP model without torch.no_grad; the fix wraps the encoder calls in torch.no_grad()
# Shape: the merged fix: both encode_text and encode_image run inside `with torch.no_grad():`; the normalisation and .cpu().detach().numpy() stay outside the block, as in the repository
# Expect: near-miss: must be silent
import base64
from dataclasses import dataclass
from io import BytesIO
from typing import Any, Callable

import clip
import numpy as np
import torch
from PIL import Image


@dataclass
class ClipResource:
    device: str
    model: Any
    preprocess: Callable
    image_index: Any
    text_index: Any


def load_clip_resource(clip_model, image_index, text_index, device="cuda"):
    model, preprocess = clip.load(clip_model, device=device, jit=False)
    model.eval()
    return ClipResource(device=device, model=model, preprocess=preprocess,
                        image_index=image_index, text_index=text_index)


def normalized(a, axis=-1, order=2):
    l2 = np.atleast_1d(np.linalg.norm(a, order, axis))
    l2[l2 == 0] = 1
    return a / np.expand_dims(l2, axis)


class KnnService:
    """the knn service provides nearest neighbors given text or image"""

    def __init__(self, clip_resources):
        self.clip_resources = clip_resources

    def compute_query(self, clip_resource, text_input, image_input, embedding_input):
        """compute the query embedding"""
        if text_input is not None and text_input != "":
            text = clip.tokenize([text_input], truncate=True).to(clip_resource.device)
            with torch.no_grad():
                text_features = clip_resource.model.encode_text(text)
            text_features = text_features / text_features.norm(dim=-1, keepdim=True)
            query = text_features.cpu().detach().numpy().astype("float32")
        elif image_input is not None:
            img = Image.open(BytesIO(base64.b64decode(image_input)))
            prepro = clip_resource.preprocess(img).unsqueeze(0).to(clip_resource.device)
            with torch.no_grad():
                image_features = clip_resource.model.encode_image(prepro)
            image_features = image_features / image_features.norm(dim=-1, keepdim=True)
            query = image_features.cpu().detach().numpy().astype("float32")
        else:
            query = np.expand_dims(np.array(embedding_input).astype("float32"), 0)
        return query

    def query(self, text_input=None, image_input=None, embedding_input=None,
              modality="image", num_result_ids=100, indice_name=None):
        if indice_name is None:
            indice_name = next(iter(self.clip_resources.keys()))
        clip_resource = self.clip_resources[indice_name]
        query = self.compute_query(clip_resource, text_input, image_input, embedding_input)
        index = clip_resource.image_index if modality == "image" else clip_resource.text_index
        distances, indices = index.search(query, num_result_ids)
        return [{"id": int(i), "similarity": float(d)} for d, i in zip(distances[0], indices[0]) if i != -1]

    def post(self, json_data):
        return self.query(
            text_input=json_data.get("text"),
            image_input=json_data.get("image"),
            embedding_input=json_data.get("embedding_input"),
            modality=json_data["modality"],
            num_result_ids=json_data.get("num_result_ids", json_data["num_images"]),
            indice_name=json_data.get("indice_name"),
        )
