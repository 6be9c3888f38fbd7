# Source: https://github.com/embeddings-benchmark/mteb/pull/1378
# Report: image/text benchmark wrappers (MIEB) went out of memory because embeddings were computed with gradients enabled; the fix wrapped the encoders in torch.no_grad()
# Shape: the fixed wrapper: each helper runs its batch loop under with torch.no_grad(), so the kept .cpu() copies carry no graph
# Expect: near-miss: must be silent
import torch
from PIL import Image
from tqdm import tqdm
from transformers import AutoModel, AutoProcessor


class ImageTextModelWrapper:
    def __init__(self, model_name, device=None, **kwargs):
        self.model_name = model_name
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = AutoModel.from_pretrained(model_name).to(self.device)
        self.model.eval()
        self.processor = AutoProcessor.from_pretrained(model_name)

    @staticmethod
    def _load(image):
        if isinstance(image, str):
            return Image.open(image).convert("RGB")
        return image

    def get_text_embeddings(self, texts, batch_size=32, **kwargs):
        all_text_embeddings = []
        with torch.no_grad():
            for i in tqdm(range(0, len(texts), batch_size)):
                batch_texts = texts[i : i + batch_size]
                inputs = self.processor(
                    text=batch_texts, return_tensors="pt", padding=True, truncation=True
                )
                inputs = {k: v.to(self.device) for k, v in inputs.items()}
                text_outputs = self.model.get_text_features(**inputs)
                all_text_embeddings.append(text_outputs.cpu())
        return torch.cat(all_text_embeddings, dim=0)

    def get_image_embeddings(self, images, batch_size=32, **kwargs):
        all_image_embeddings = []
        with torch.no_grad():
            for i in tqdm(range(0, len(images), batch_size)):
                batch_images = [self._load(img) for img in images[i : i + batch_size]]
                inputs = self.processor(images=batch_images, return_tensors="pt")
                inputs = {k: v.to(self.device) for k, v in inputs.items()}
                image_outputs = self.model.get_image_features(**inputs)
                all_image_embeddings.append(image_outputs.cpu())
        return torch.cat(all_image_embeddings, dim=0)

    def calculate_probs(self, text_embeddings, image_embeddings):
        text_embeddings = text_embeddings / text_embeddings.norm(dim=-1, keepdim=True)
        image_embeddings = image_embeddings / image_embeddings.norm(dim=-1, keepdim=True)
        logits = torch.matmul(image_embeddings, text_embeddings.T)
        return (logits * 100).softmax(dim=-1)
