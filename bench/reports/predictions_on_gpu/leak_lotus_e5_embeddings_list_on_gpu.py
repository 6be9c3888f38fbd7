# Source: https://github.com/lotus-data/lotus/pull/16
# Report: "Optimize speed and gpu usage for embed": E5Model.embed collected every batch's embeddings in a list on the GPU and concatenated them at the end, and torch.cat needs double the memory since it keeps the originals as well as the new concatenated tensor.
# Shape: inside the batch loop each CUDA embedding batch (computed under no_grad, so no graph) is appended to a Python list that grows with the corpus and stays on the device until the final torch.cat, which briefly doubles it.
# Expect: TML004 line 36
import torch
import torch.nn.functional as F
from tqdm import tqdm
from transformers import AutoModel, AutoTokenizer


class E5Model:
    def __init__(self, model="intfloat/e5-base-v2", device=None, batch_size=64, **kwargs):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModel.from_pretrained(model).to(self.device)
        self.batch_size = batch_size
        self.kwargs = {"normalize": True, **kwargs}

    @staticmethod
    def average_pool(last_hidden_states, attention_mask):
        last_hidden = last_hidden_states.masked_fill(~attention_mask[..., None].bool(), 0.0)
        return last_hidden.sum(dim=1) / attention_mask.sum(dim=1)[..., None]

    def embed(self, docs, **kwargs):
        kwargs = {**self.kwargs, **kwargs}
        batch_size = kwargs.get("batch_size", self.batch_size)
        embeddings = []
        for batch_start in tqdm(range(0, len(docs), batch_size)):
            batch = docs[batch_start : batch_start + batch_size]
            with torch.no_grad():
                batch_dict = self.tokenizer(batch, padding=True, truncation=True,
                                            return_tensors="pt").to(self.device)
                outputs = self.model(**batch_dict)
                batch_embeddings = self.average_pool(outputs.last_hidden_state,
                                                     batch_dict["attention_mask"])
                embeddings.append(batch_embeddings)  # expect: TML004
        embeddings = torch.cat(embeddings, dim=0)
        if kwargs["normalize"]:
            embeddings = F.normalize(embeddings, p=2, dim=1)
        return embeddings.cpu().numpy()

    def __call__(self, docs, **kwargs):
        return self.embed(docs, **kwargs)
