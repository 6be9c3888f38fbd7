# Source: https://github.com/encord-team/text-to-image-eval/pull/12
# Report: build_embedding kept every batch's normalised CLIP image features on the GPU until np.concatenate at the end; the fix moves each batch to the CPU
# Shape: static builder appends the GPU features of each batch (under inference_mode) to a list created before the loop
# Expect: TML004 line 32
import numpy as np
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


class Embeddings:
    def __init__(self, images: np.ndarray, labels: np.ndarray) -> None:
        self.images = images
        self.labels = labels

    @staticmethod
    def build_embedding(model, dataset, batch_size: int = 50) -> "Embeddings":
        def _collate_fn(examples):
            pixel_values = torch.stack([ex["image"] for ex in examples])
            labels = torch.tensor([ex["label"] for ex in examples])
            return {"pixel_values": pixel_values.to(model.device), "labels": labels}

        transformed = dataset.with_transform(model.process_fn)
        dataloader = DataLoader(transformed, collate_fn=_collate_fn, batch_size=batch_size)
        tmp_embeddings = []
        tmp_labels = []
        with torch.inference_mode():
            for batch in tqdm(dataloader, desc=f"Embedding dataset with {model.title}"):
                tmp_labels.append(batch["labels"])
                features = model.model.get_image_features(pixel_values=batch["pixel_values"])
                emb = (features / features.norm(p=2, dim=-1, keepdim=True)).squeeze()
                tmp_embeddings.append(emb)  # expect: TML004
        image_embeddings = np.concatenate([e.cpu().numpy() for e in tmp_embeddings], 0)
        labels = torch.concatenate(tmp_labels).numpy()
        return Embeddings(images=image_embeddings, labels=labels)
